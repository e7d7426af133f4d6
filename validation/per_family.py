"""`trainmem validate` one family at a time: a Markdown table of peak errors per model_type.

    python validation/per_family.py validation/data/families.jsonl [--trainmem build/bin/trainmem]

`trainmem validate` stops at the first row whose config it refuses, so a file that mixes priced
and not-yet-priced families says nothing about either. This script splits the rows by the
model_type of the config.json each row names, runs `trainmem validate --json` on each part, and
prints one line per family: rows, median / worst absolute peak error, mean signed error, or the
one-line error trainmem gave for that family. With --rows it also lists every row's error.
Only the standard library is used, so it runs without the measurement venv.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_type_of(row):
    path = row["config"]["model"]
    full = path if os.path.isabs(path) else os.path.join(REPO_ROOT, path)
    with open(full) as f:
        return json.load(f)["model_type"]


def group_rows(lines):
    groups = collections.OrderedDict()
    for line in lines:
        if line.strip():
            row = json.loads(line)
            groups.setdefault(model_type_of(row), []).append(line if line.endswith("\n") else line + "\n")
    return groups


def validate(trainmem, lines):
    """Run `trainmem validate --json` on these rows; return (report dict or None, error text)."""
    with tempfile.TemporaryDirectory() as tmp:
        # validate resolves config paths from the working directory or from the data file's
        # grandparent's parent, so run it from the repository root.
        path = os.path.join(tmp, "rows.jsonl")
        with open(path, "w") as f:
            f.writelines(lines)
        p = subprocess.run([trainmem, "validate", path, "--json"], cwd=REPO_ROOT,
                           capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return json.loads(p.stdout), ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--trainmem", default=os.path.join(REPO_ROOT, "build", "bin", "trainmem"))
    ap.add_argument("--rows", action="store_true", help="also list every row's error")
    args = ap.parse_args(argv)
    with open(args.file) as f:
        groups = group_rows(f.readlines())
    print("| family | rows | median abs % | worst abs % | mean signed % | note |")
    print("|---|---:|---:|---:|---:|---|")
    details = []
    for family, lines in groups.items():
        rep, err = validate(args.trainmem, lines)
        if rep is None:
            print(f"| {family} | {len(lines)} | | | | refused: {err.replace('|', '/')} |")
            continue
        print(f"| {family} | {rep['rows']} | {rep['median_abs_pct_error']:.2f} | "
              f"{rep['max_abs_pct_error']:.2f} | {rep['mean_signed_pct_error']:+.2f} | |")
        details += rep["per_row"]
    if args.rows:
        print("\n| row | measured MiB | predicted MiB | error % |\n|---|---:|---:|---:|")
        for r in details:
            print(f"| {r['id']} | {r['measured_peak_bytes'] / 2**20:.2f} | "
                  f"{r['predicted_peak_bytes'] / 2**20:.2f} | {r['pct_error']:+.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Print a Markdown table of measurement rows (for docs and for a quick look at a run).

    python validation/summarize.py validation/data/measurements.jsonl [--compare validation/data/crosscheck.jsonl]

With --compare, rows of the second file are matched by id and the peak difference is shown, which
is how the fake-vs-real and dispatch-vs-MemTracker agreement in the docs was read off.
"""
import argparse
import json

MIB = 2 ** 20


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("--compare", default=None)
    args = ap.parse_args()
    rows = load(args.jsonl)
    if args.compare:
        base = {r["id"]: r for r in rows}
        print("| id | tracker | peak MiB | reference MiB | difference bytes |")
        print("|---|---|---:|---:|---:|")
        for r in load(args.compare):
            ref = base.get(r["id"])
            if ref is None:
                continue
            a, b = r["measured"]["peak_bytes"], ref["measured"]["peak_bytes"]
            print(f"| {r['id']} | {r['measured']['tracker']} | {a / MIB:.2f} | {b / MIB:.2f} | {a - b:+d} |")
        return
    print("| id | tracker | peak MiB | at | params | grads | optim | activ | other |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        m = r["measured"]
        c = {k: f"{v / MIB:.1f}" for k, v in m["by_category"].items()}
        print(f"| {r['id']} | {m['tracker']} | {m['peak_bytes'] / MIB:.1f} | step{m['peak_step']} {m['peak_phase']} "
              f"| {c['parameters']} | {c['gradients']} | {c['optimizer']} | {c['activations']} | {c['other']} |")


if __name__ == "__main__":
    main()

"""Measure the peak tensor memory of real PyTorch training steps and write trainmem JSONL rows.

    python validation/measure.py --matrix full --out validation/data/measurements.jsonl
    python validation/measure.py --matrix subset --out /tmp/subset.jsonl --only lora

Each configuration of the chosen matrix (validation/matrix.py) is built from a config dict with
random weights, trained for two optimizer steps under a memory tracker, and written as one line
of schema trainmem.measurement/1 as soon as it finishes. A failing configuration is reported on
stderr and skipped; the exit status is 1 if any failed.
"""
import argparse
import json
import os
import sys
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import matrix  # noqa: E402
from harness import record, run  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrix", choices=sorted(matrix.MATRICES), default="subset")
    ap.add_argument("--out", required=True, help="JSONL file to (over)write")
    ap.add_argument("--only", default=None, help="keep configurations whose id contains this")
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows already in --out and measure only the missing ones")
    # One thread: with other jobs on the box, a second OpenMP thread made every op ~5x slower.
    ap.add_argument("--start", type=int, default=1,
                    help="begin at this configuration (1-based): the rest of a cut-off run")
    ap.add_argument("--give-up-after", type=int, default=0,
                    help="stop when the first N configurations all failed (a broken environment "
                         "on a lent GPU must not spend its minutes); 0 never stops")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    return ap.parse_args(argv)


def _tracker_name(spec):
    if spec["mode"] == "cuda":
        return "cuda"  # harness/cuda.py CudaTracker, whatever the spec's CPU tracker says
    return ("fake+" if spec["mode"] == "fake" else "") + spec["tracker"]


def _cuda_child(spec, out_path, command):
    """Measure one cuda row in this (forked) process, its allocator configured from the start."""
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if spec.get("alloc_conf"):
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = spec["alloc_conf"]  # read when CUDA starts
    with open(out_path, "w") as f:
        json.dump(run.measure(spec, command), f)


def _measure_cuda_isolated(spec):
    """A cuda row in a fresh process with its PYTORCH_CUDA_ALLOC_CONF (read when CUDA starts).

    Forked while this process has not started CUDA, so that the child keeps the imports (torch,
    transformers, peft: most of a row's time on the lent machine); a new interpreter otherwise.
    """
    import multiprocessing
    import subprocess
    import tempfile
    command = record.command_line()
    with tempfile.NamedTemporaryFile("w+", suffix=".json") as tmp:
        if not torch.cuda.is_initialized():
            child = multiprocessing.get_context("fork").Process(
                target=_cuda_child, args=(spec, tmp.name, command))
            child.start()
            child.join()
            if child.exitcode != 0:
                raise RuntimeError(f"the measuring process exited with {child.exitcode}")
            return json.load(open(tmp.name))
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if spec.get("alloc_conf"):
            env["PYTORCH_CUDA_ALLOC_CONF"] = spec["alloc_conf"]
        code = ("import json, sys; sys.path.insert(0, %r); from harness import run; "
                "spec = json.loads(%r); json.dump(run.measure(spec, %r), open(%r, 'w'))"
                % (os.path.dirname(os.path.abspath(__file__)), json.dumps(spec), command,
                   tmp.name))
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        return json.load(open(tmp.name))


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning)
    specs = matrix.MATRICES[args.matrix]()
    if args.only:
        specs = [s for s in specs if args.only in record.row_id(s)]
    specs = specs[args.start - 1:]
    command = record.command_line()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    if args.resume and os.path.exists(args.out):
        with open(args.out) as f:
            done = {(r["id"], r["measured"]["tracker"]) for r in map(json.loads, f)}
        specs = [s for s in specs if (record.row_id(s), _tracker_name(s)) not in done]
    failed, start = 0, time.time()
    with open(args.out, "a" if args.resume else "w") as out:
        for i, spec in enumerate(specs, 1):
            rid = record.row_id(spec)
            t0 = time.time()
            try:
                if spec.get("mode") == "cuda":
                    rows = _measure_cuda_isolated(spec)
                else:
                    rows = [run.measure(spec, command)]
            except Exception:  # one broken configuration must not lose the others
                failed += 1
                print(f"[{i}/{len(specs)}] FAILED {rid} ({spec['mode']})", file=sys.stderr)
                traceback.print_exc()
                if args.give_up_after and failed == i >= args.give_up_after:
                    print(f"the first {i} configurations all failed: giving up", file=sys.stderr)
                    return 2
                continue
            for row in rows:
                out.write(json.dumps(row, sort_keys=False) + "\n")
            out.flush()
            row = rows[0]
            m = row["measured"]
            print(f"[{i}/{len(specs)}] {rid} ({spec['mode']}, {spec['tracker']}): "
                  f"peak {m['peak_bytes'] / 2**20:.1f} MiB at step{m['peak_step']} {m['peak_phase']} "
                  f"in {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
    print(f"{len(specs) - failed} rows written to {args.out}, {failed} failed, "
          f"{time.time() - start:.0f} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

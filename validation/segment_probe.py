#!/usr/bin/env python3
"""Which allocation cuts each CUDA segment: one CUDA-matrix configuration's loop under PyTorch's
memory history, every segment the caching allocator creates listed with its phase, its size, the
request that needed it and that request's Python stack.

Why: the allocator model replays a loop's CPU-traced stream to CUDA's reserved memory to the MiB
(docs/accuracy.md, "The allocator model on a traced stream"), except where CUDA allocates what the
CPU loop does not. Two such gaps are known and not identified: the LoRA run's second backward
caches one more 594 MiB segment (the fp32 logits' size), and the checkpointed full fine-tune's
first forward one more 20 MiB segment (tests/property/traced_replay_test.cpp, kKnownGaps); and a
paged AdamW run reserves 9.7 % more than the model says, with no CPU trace to compare
(bitsandbytes). The request and stack behind each segment name the operation.

    python validation/segment_probe.py --row ROW --out segments.jsonl

One JSON line per segment created after the weights are loaded: {"row", "phase" ("s2:backward"),
"segment_bytes", "request_bytes", "frames": ["file:line function", ...]}, innermost first, at most
12. CUDA only (part of gpu_run.sh); PYTORCH_CUDA_ALLOC_CONF is the row's, set before torch starts.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import matrix  # noqa: E402
from harness.marks import PhaseMarker  # noqa: E402

FRAMES = 12


class PhaseTimes(PhaseMarker):
    """The wall time at each phase mark, in us."""

    def __init__(self):
        self.marks = []  # (time_us, "s1:forward")

    def mark(self, step, phase):
        import torch
        torch.cuda.synchronize()
        self.marks.append((time.time() * 1e6, f"s{step}:{phase}"))

    def phase_at(self, time_us):
        name = "before"
        for t, n in self.marks:
            if t <= time_us:
                name = n
        return name


def segments(snapshot, phases, row):
    """The trace's segment_alloc entries, each with the request it was cut for: the allocator
    records a new segment while serving a request (CUDACachingAllocator.cpp alloc_block), before
    that request's own alloc entry, which carries the requested size."""
    out, waiting = [], None
    for trace in snapshot["device_traces"]:
        for e in trace:
            if e["action"] == "segment_alloc":
                waiting = {"row": row, "phase": phases.phase_at(e.get("time_us", 0)),
                           "segment_bytes": e["size"], "request_bytes": None,
                           "frames": [f"{f['filename']}:{f['line']} {f['name']}"
                                      for f in e.get("frames", [])[:FRAMES]]}
                out.append(waiting)
            elif e["action"] == "alloc" and waiting is not None:
                waiting["request_bytes"] = e["size"]
                waiting = None
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--row", required=True, help="a matrix.cuda() configuration id")
    ap.add_argument("--out", required=True, help="JSON lines, appended")
    a = ap.parse_args(argv)
    spec = dict(matrix.cuda_spec(a.row), mode="cuda")
    if spec.get("alloc_conf"):
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = spec["alloc_conf"]
    import torch

    from harness import configs, cuda, step
    if not torch.cuda.is_available():
        print("segment_probe: needs a CUDA device", file=sys.stderr)
        return 2
    cfg = configs.load(spec["model"])
    model, opt = cuda.prepare(spec, cfg)
    input_ids, labels = (t.cuda() for t in step.make_batch(spec["batch"], spec["seq"],
                                                            cfg["vocab_size"]))
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(max_entries=200_000, context="alloc",
                                             stacks="python")
    phases = PhaseTimes()
    step.train_steps(model, opt, phases, input_ids, labels, spec["precision"], steps=2,
                     device="cuda")
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    rows = segments(snapshot, phases, a.row)
    with open(a.out, "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"segment_probe: {len(rows)} segments cut after loading -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

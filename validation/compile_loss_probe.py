#!/usr/bin/env python3
"""What an eager and a torch.compile'd cross-entropy keep for backward, on CPU.

The loss is the one HF's ForCausalLMLoss and torchtune's CEWithChunkedOutputLoss
.compute_cross_entropy run: `F.cross_entropy(logits.float(), labels)` on bf16 logits (N, V).
For each mode the probe reports

- the tensors the autograd graph saves (walking `loss.grad_fn`: the `_saved_*` attributes of eager
  nodes, `saved_tensors` of AOTAutograd's CompiledFunctionBackward), each with its shape, dtype,
  bytes and whether it is the logits' own storage;
- from the profiler's CPU allocator events (`profile_memory=True`): the bytes forward leaves
  allocated, forward's peak, and backward's peak, each above what was allocated before, and the
  sizes of the allocations of at least 4 B per row (the per-row and per-logit buffers).

`--chunk-counts K,...` runs the loss, for each K, as torchtune 0.3 does with `compile: True`: the logits split into K
pieces along the sequence, the per-piece `compute_cross_entropy` compiled
(torchtune@30b8519e training/_compile.py:68-71), the pieces' losses summed.

trainmem prices these in src/ledger/logits.cpp (eager_loss / compiled_loss); the committed
outputs are validation/data/compile-loss-probe-torch2.4.1.json and -torch2.5.1.json, one per
torch version (`pip install torch==VERSION "numpy<2.0"` in a venv; inductor needs a C++ compiler):

    python validation/compile_loss_probe.py --rows 256 --vocab 4096 --chunk-counts 1,8 \
        --out validation/data/compile-loss-probe-torch2.5.1.json
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from autograd_saved import graph_saved_tensors
from probe_output import allocation_sizes, cpu_provenance, write_json


def compute_cross_entropy(logits, labels):
    # torchtune modules/loss/ce_chunked_output_loss.py compute_cross_entropy (reduction "sum").
    return F.cross_entropy(logits.float(), labels, ignore_index=-100, reduction="sum")


def chunked_loss(ce, logits, labels, chunks):
    total = 0.0
    for lg, lb in zip(logits.chunk(chunks, dim=0), labels.chunk(chunks, dim=0)):
        total = total + ce(lg, lb)
    return total / labels.numel()


def saved_tensors(loss, logits):
    """Every tensor the graph below `loss` saves, once per storage."""
    out, seen = [], set()
    base = logits.untyped_storage().data_ptr()
    for node, name, v in graph_saved_tensors(loss.grad_fn):
        key = (v.untyped_storage().data_ptr(), v.storage_offset(), tuple(v.shape), v.dtype)
        if key in seen:
            continue
        seen.add(key)
        out.append({
            "node": type(node).__name__,
            "attr": name,
            "shape": list(v.shape),
            "dtype": str(v.dtype).replace("torch.", ""),
            "bytes": v.numel() * v.element_size(),
            "is_logits_storage": v.untyped_storage().data_ptr() == base,
        })
    return out


def allocator_figures(prof, rows):
    """From the profiler's CPU allocator events (probe_output.allocation_sizes): the bytes left
    allocated, the peak above the start, and the sizes of the allocations of at least 4 B per row
    (the per-row and per-logit buffers)."""
    live = peak = 0
    big = []
    for n in allocation_sizes(prof):
        live += n
        peak = max(peak, live)
        if n >= 4 * rows:
            big.append(n)
    return live, peak, big


def run(mode, rows, vocab, chunks, seed):
    torch.manual_seed(seed)
    logits = torch.randn(rows, vocab, dtype=torch.bfloat16).requires_grad_(True)
    labels = torch.randint(0, vocab, (rows,), dtype=torch.int64)
    ce = torch.compile(compute_cross_entropy) if mode == "compiled" else compute_cross_entropy
    # One untraced step first: the compile, and the inductor kernels' first allocations.
    chunked_loss(ce, logits, labels, chunks).backward()
    logits.grad = None
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as fwd:
        loss = chunked_loss(ce, logits, labels, chunks)
    left, fwd_peak, fwd_big = allocator_figures(fwd, rows)
    saved = saved_tensors(loss, logits)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as bwd:
        loss.backward()
    _, bwd_peak, bwd_big = allocator_figures(bwd, rows)
    grad = logits.grad
    return {
        "mode": mode,
        "chunks": chunks,
        "forward_left_allocated_bytes": left,
        "forward_peak_bytes": fwd_peak,
        "forward_allocations_bytes": fwd_big,
        "backward_peak_bytes": bwd_peak,
        "backward_allocations_bytes": bwd_big,
        "logits_grad": {"shape": list(grad.shape), "dtype": str(grad.dtype).replace("torch.", "")},
        "saved": saved,
    }


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=256, help="tokens N")
    ap.add_argument("--vocab", type=int, default=4096, help="vocabulary V")
    ap.add_argument("--chunk-counts", default="1,8", help="comma list of piece counts")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    runs = []
    for chunks in [int(c) for c in a.chunk_counts.split(",")]:
        for mode in ("eager", "compiled"):
            runs.append(run(mode, a.rows, a.vocab, chunks, a.seed))
    n, v = a.rows, a.vocab
    doc = {
        "schema": "trainmem.compile-loss-probe/1",
        "what": "saved tensors and CPU allocator peaks of F.cross_entropy(logits.float(), labels) "
                "on bf16 logits, eager vs torch.compile (inductor)",
        "rows": n,
        "vocab": v,
        "reference_bytes": {"bf16_NV": 2 * n * v, "fp32_NV": 4 * n * v, "fp32_N": 4 * n},
        "runs": runs,
        "provenance": cpu_provenance("compile_loss_probe.py", argv),
    }
    write_json(doc, a.out)


if __name__ == "__main__":
    main(sys.argv[1:])

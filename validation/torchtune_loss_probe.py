#!/usr/bin/env python3
"""What torchtune's pre-0.3 loss holds, on CPU: the model's fp32 logits and the recipe's shift.

torchtune before the chunked loss (0.1 and 0.2: the April 2024 LoRA tutorial and PR #527 rows)
ends `TransformerDecoder.forward` with `output = self.output(h).float()`
(torchtune@ff594c23 torchtune/modules/transformer.py:210; v0.2.1 :250), and its single-device
recipes compute the loss as (torchtune@ff594c23 recipes/lora_finetune_single_device.py:447-453,
full_finetune_single_device.py:403-409):

    logits = self._model(input_ids)
    logits = logits[..., :-1, :].contiguous()
    labels = labels[..., 1:].contiguous()
    logits = logits.transpose(1, 2)
    loss = self._loss_fn(logits, labels)     # torch.nn.CrossEntropyLoss

This probe runs exactly those lines after a bf16 output projection (frozen, as in LoRA: the input
needs a gradient, the weight does not) and reports, from the profiler's CPU allocator events,
every allocation of at least one byte per logit in order, the bytes live after the forward, and
the peaks of forward and backward above their start, each also in units of N x V x 4 B (one fp32
copy of the logits, N = batch x seq).

trainmem prices the chain in src/ledger/logits.cpp (full_chain with the torchtune < 0.3
differences in src/plan/framework.cpp); docs/frameworks.md says which figure is CPU's and which
CUDA's (CUDA's host_softmax makes its input contiguous first, so log_softmax over dim 1 of the
transposed logits copies them there).

    python validation/torchtune_loss_probe.py --out validation/data/torchtune-loss-probe.json
"""
import argparse
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from probe_output import allocation_sizes, cpu_provenance, write_json


def summarise(sizes, unit, floor):
    """Live bytes left, the peak above the start, and the allocations (positive) and frees
    (negative) of at least `floor` bytes, in units of `unit`."""
    live = peak = 0
    big = []
    for n in sizes:
        live += n
        peak = max(peak, live)
        if abs(n) >= floor:
            big.append(round(n / unit, 4))
    return live, peak, big


def run(batch, seq, vocab, hidden, seed):
    torch.manual_seed(seed)
    output = torch.nn.Linear(hidden, vocab, bias=False, dtype=torch.bfloat16)
    output.weight.requires_grad_(False)
    h = torch.randn(batch, seq, hidden, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, vocab, (batch, seq), dtype=torch.int64)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        # The names are rebound as in the recipe, so each tensor is freed where it is there.
        logits = output(h).float()  # TransformerDecoder.forward
        logits = logits[..., :-1, :].contiguous()  # the recipe, line by line
        targets = labels[..., 1:].contiguous()
        logits = logits.transpose(1, 2)
        return logits, loss_fn(logits, targets)

    step()[1].backward()  # one untraced step: the kernels' first allocations
    h.grad = None
    unit = 4 * batch * seq * vocab
    floor = batch * seq * vocab  # one byte per logit
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as fwd:
        kept, loss = step()
    left, fwd_peak, fwd_big = summarise(allocation_sizes(fwd), unit, floor)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as bwd:
        loss.backward()
    _, bwd_peak, bwd_big = summarise(allocation_sizes(bwd), unit, floor)
    return {
        "batch": batch,
        "seq": seq,
        "vocab": vocab,
        "hidden": hidden,
        "fp32_logits_bytes": unit,
        "kept_by_the_loop": {"shape": list(kept.shape), "dtype": str(kept.dtype),
                             "contiguous": kept.is_contiguous()},
        "forward_left_allocated_bytes": left,
        "forward_left_fp32_logits": round(left / unit, 4),
        "forward_peak_bytes": fwd_peak,
        "forward_peak_fp32_logits": round(fwd_peak / unit, 4),
        "forward_allocations_fp32_logits": fwd_big,
        "backward_peak_bytes": bwd_peak,
        "backward_peak_fp32_logits": round(bwd_peak / unit, 4),
        "backward_allocations_fp32_logits": bwd_big,
    }


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    doc = {
        "schema": "trainmem.torchtune-loss-probe/1",
        "what": "allocations of torchtune < 0.3's loss: self.output(h).float(), then the "
                "recipe's shift, contiguous copy, transpose and nn.CrossEntropyLoss",
        "run": run(a.batch, a.seq, a.vocab, a.hidden, a.seed),
        "provenance": cpu_provenance("torchtune_loss_probe.py", argv),
    }
    write_json(doc, a.out)


if __name__ == "__main__":
    main(sys.argv[1:])

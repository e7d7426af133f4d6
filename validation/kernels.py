"""Which aten kernels a family's training step runs on CPU: attention, dropout, activations, norms.

    python validation/kernels.py [--only SUBSTRING] [--attention sdpa|eager]

Runs one forward and backward of each tiny family config (batch 1 x seq 128, bf16, real
tensors) under a TorchDispatchMode that counts aten ops, and prints per family the attention,
dropout, activation and normalisation ops that ran. This is how docs/accuracy-measurement.md
knows, for example, that a sliding-window mask sends CPU SDPA to the math path. Not a
measurement: nothing is written to validation/data.
"""
import argparse
import collections
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import matrix  # noqa: E402
from harness import build, configs, step  # noqa: E402

INTERESTING = ("attention", "softmax", "dropout", "bernoulli", "gelu", "silu", "tanh", "norm",
               "rsqrt", "baddbmm", "bmm", "rand")


class OpCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if any(k in name for k in INTERESTING):
            self.counts[name] += 1
        return func(*args, **(kwargs or {}))


def ops_of(model_name, attention, batch=1, seq=128):
    cfg = configs.load(model_name)
    model = build.build_model(cfg, "bf16", attention)
    ids, labels = step.make_batch(batch, seq, cfg["vocab_size"])
    with OpCounter() as c:
        model(input_ids=ids, labels=labels, use_cache=False).loss.backward()
    return c.counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None)
    ap.add_argument("--attention", default=None, help="force one implementation for every family")
    ap.add_argument("--seq", type=int, default=128)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    for model_name, _, attns in matrix.SUPPORTED_FAMILIES + matrix.NEW_FAMILIES:
        if args.only and args.only not in model_name:
            continue
        for attention in ([args.attention] if args.attention else attns):
            counts = ops_of(model_name, attention, seq=args.seq)
            print(f"{model_name} ({attention}, s{args.seq}): "
                  + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

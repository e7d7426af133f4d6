"""Bytes autograd saves for backward per element, for each activation function and dropout.

    python validation/saved_bytes.py

For every activation name the families' configs use (transformers' ACT2FN), and for
nn.Dropout in training, this applies the module to a bf16 (and an fp32) tensor that requires
grad and counts the distinct storages autograd saves for backward (saved_tensors_hooks),
excluding the input itself when it is saved (the layer before already keeps it). The result is
bytes per element of the input. Prints a Markdown table for docs/accuracy-measurement.md.
"""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from transformers.activations import ACT2FN  # noqa: E402

ACTIVATIONS = ("silu", "gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu")
N = 1 << 16


def saved_bytes_per_element(fn, dtype):
    x = torch.randn(N, dtype=dtype, requires_grad=True)
    seen = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() != x.untyped_storage().data_ptr():
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn(x)
    del y
    return sum(seen.values()) / N


def main():
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    print("| function (transformers name) | module | saved B/elem, bf16 input | saved B/elem, fp32 input |")
    print("|---|---|---:|---:|")
    for name in ACTIVATIONS:
        mod = ACT2FN[name]
        print(f"| `{name}` | {type(mod).__name__} | {saved_bytes_per_element(mod, torch.bfloat16):g} | "
              f"{saved_bytes_per_element(mod, torch.float32):g} |")
    drop = torch.nn.Dropout(0.1).train()
    print(f"| dropout p=0.1 (train) | Dropout | {saved_bytes_per_element(drop, torch.bfloat16):g} | "
          f"{saved_bytes_per_element(drop, torch.float32):g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

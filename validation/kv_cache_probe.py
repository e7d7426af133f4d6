"""What HF's KV cache in the model output adds to a training step (use_cache), measured on CPU.

A model call takes use_cache from the config (True in most) unless gradient checkpointing turns
it off, so a custom loop's `outputs = model(**batch)` builds a DynamicCache of every layer's key
and value states, and the HF Trainer did too before transformers 5. This runs a tiny Llama
(2 layers, hidden 256, 8 heads, head_dim 32) in bf16 with AdamW for three steps, once with
use_cache=False and once with the config's default, and records the live tensor bytes per phase
(validation/harness/dispatch_tracker.py) and their difference:

- kept: the loop keeps `outputs` until the next step rebinds it (PEFT's MetaMathQA loop);
- dropped: the output is deleted once the loss is taken (the Trainer's compute_loss returns the
  loss only);

each with 2 and 8 key/value heads, with and without a padding mask (SDPA then repeats K/V); and
a Phi-3 of the same shape (fused qkv_proj, v a view of its output), kept, without a mask.
trainmem prices the cache in src/ledger/activations.cpp (activations.kv_cache); the unit test
FrameworkLedger.OutputKvCacheMatchesTheCpuProbe checks the same differences.

    validation/.venv/bin/python validation/kv_cache_probe.py --out validation/data/kv-cache-probe.json
"""
import argparse
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Phi3Config, Phi3ForCausalLM

from harness.step_peaks import third_step_peaks, write_probe

LAYERS, HIDDEN, HEADS, VOCAB, BATCH, SEQ = 2, 256, 8, 512, 4, 256


FAMILIES = {"llama": (LlamaConfig, LlamaForCausalLM), "phi3": (Phi3Config, Phi3ForCausalLM)}


def phase_peaks(use_cache, kv_heads, mask, keep, family="llama"):
    config_class, model_class = FAMILIES[family]
    cfg = config_class(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=512,
                       num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                       num_key_value_heads=kv_heads, use_cache=True, pad_token_id=0,
                       bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    model = model_class._from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa").train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    attention_mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    attention_mask[0, -16:] = 0  # one right-padded row
    kwargs = {"input_ids": ids, "labels": ids}
    if mask:
        kwargs["attention_mask"] = attention_mask
    if not use_cache:
        kwargs["use_cache"] = False
    return third_step_peaks(model, opt, lambda: model(**kwargs), (ids, attention_mask), keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    runs = []
    cases = [("llama", keep, mask, kv) for keep in (True, False) for mask in (False, True)
             for kv in (2, 8)] + [("phi3", True, False, kv) for kv in (2, 8)]
    for family, keep, mask, kv in cases:
        on = phase_peaks(True, kv, mask, keep, family)
        off = phase_peaks(False, kv, mask, keep, family)
        runs.append({
            "family": family,
            "loop": "kept" if keep else "dropped",
            "padding_mask": mask,
            "kv_heads": kv,
            "cache_bytes": LAYERS * BATCH * SEQ * 2 * kv * (HIDDEN // HEADS) * 2,
            "use_cache_minus_no_cache": {p: on[p] - off[p] for p in sorted(on)},
        })
    out = {
        "model": {"layers": LAYERS, "hidden": HIDDEN, "heads": HEADS, "head_dim": HIDDEN // HEADS,
                  "vocab": VOCAB, "intermediate": 512, "dtype": "bfloat16",
                  "attention": "sdpa", "families": sorted(FAMILIES)},
        "batch": BATCH, "seq": SEQ, "step": 3,
        "runs": runs,
    }
    write_probe(args.out, "kv_cache_probe.py", out)


if __name__ == "__main__":
    sys.exit(main())

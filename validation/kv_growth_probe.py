#!/usr/bin/env python3
"""What a growing KV cache reserves on CUDA: transformers' generate() with its DynamicCache.

DynamicCache appends each token with `torch.cat([keys, new])` per layer, so every step allocates
each layer's K and V one position longer while the old ones are still live. trainmem's caching
allocator model says that from 10 MiB on every such tensor gets its own segment rounded to 2 MiB
and each size it outgrows stays cached (tests/unit/caching_allocator_test.cpp,
ConcatenationGrowthStrandsOutgrownSegments): for this probe's shape, 150 prompt tokens and 300
generated, 2.40 GiB of cache and 25.05 GiB reserved, 2.50 GiB with expandable segments
(`build/bin/trainmem_bench --benchmark_filter=KvCache`). This probe measures it: on an H200 at
100 new tokens, 4.01 GiB (the cache alone over-states it; generate()'s own stream, traced with
`alloc_stream.py --kv-probe 100` and replayed, gives 3.98 GiB: docs/accuracy.md).

The model is a Llama with Llama-3.2-3B's cache shape (28 layers, 8 KV heads of 128, bf16) and
tiny weights (hidden 1,024, MLP 1,024, vocabulary 1,024), random; batch 50 as PEFT's MetaMathQA
evaluation, greedy, min_new_tokens = max_new_tokens so that every step runs. Each run reports
max_memory_allocated and max_memory_reserved above what the weights hold, and the allocator's
segment count. CUDA only; PYTORCH_CUDA_ALLOC_CONF is set from --alloc-conf before torch starts.

    python validation/kv_growth_probe.py --out kv-growth.jsonl
    python validation/kv_growth_probe.py --alloc-conf expandable_segments:True --out kv-growth.jsonl
"""
import argparse
import json
import os
import sys

PROMPT, BATCH, LAYERS, KV_HEADS, HEAD_DIM = 150, 50, 28, 8, 128


def probe_model():
    """The probe's model: Llama-3.2-3B's cache shape with tiny random weights, bf16, on the CPU."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=1024, intermediate_size=1024, num_hidden_layers=LAYERS,
                         num_attention_heads=KV_HEADS, num_key_value_heads=KV_HEADS,
                         head_dim=HEAD_DIM, vocab_size=1024, max_position_embeddings=2048)
    return LlamaForCausalLM(config).to(dtype=torch.bfloat16).eval()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generated", default="100,300", help="comma list of new tokens per run")
    ap.add_argument("--alloc-conf", default="", help="PYTORCH_CUDA_ALLOC_CONF for this process")
    ap.add_argument("--out", required=True, help="JSON lines, appended")
    a = ap.parse_args(argv)
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = a.alloc_conf
    import torch
    import transformers

    if not torch.cuda.is_available():
        print("kv_growth_probe: needs a CUDA device", file=sys.stderr)
        return 2
    model = probe_model().to("cuda")
    ids = torch.randint(3, 1024, (BATCH, PROMPT), device="cuda")
    mask = torch.ones_like(ids)
    for generated in [int(g) for g in a.generated.split(",")]:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        base_alloc = torch.cuda.memory_allocated()
        base_reserved = torch.cuda.memory_reserved()
        torch.cuda.reset_peak_memory_stats()
        with torch.no_grad():
            model.generate(ids, attention_mask=mask, max_new_tokens=generated,
                           min_new_tokens=generated, do_sample=False, pad_token_id=0,
                           use_cache=True)
        torch.cuda.synchronize()
        stats = torch.cuda.memory_stats()
        row = {"prompt": PROMPT, "generated": generated, "batch": BATCH,
               "alloc_conf": a.alloc_conf,
               "cache_bytes": LAYERS * 2 * BATCH * KV_HEADS * HEAD_DIM * 2 * (PROMPT + generated),
               "max_allocated_above_weights": torch.cuda.max_memory_allocated() - base_alloc,
               "max_reserved_above_weights": torch.cuda.max_memory_reserved() - base_reserved,
               "segments_allocated": stats.get("segment.all.allocated", 0),
               "alloc_retries": stats.get("num_alloc_retries", 0),
               "device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "transformers": transformers.__version__}
        with open(a.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

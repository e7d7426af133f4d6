"""What a run of variable-length micro-batches adds to the reserved figure (docs/gpu.md,
"Variable-length batches"): the model's figures, not a measurement. Writes a synthetic
Alpaca-like file (2,000 records, seeded; the records' text is sized so that trainmem's
bytes-per-token estimate for a 32,000 vocabulary gives log-normal token counts, median about
110) and prints, for the torchtune 0.1 Llama-2-7B plans of docs/accuracy.md, one step at 512
tokens against the run of the file's micro-batches.

Usage: python3 bench/dataset_run.py [BIN]   (BIN: build/bin/trainmem)
"""
import json
import os
import random
import subprocess
import sys
import tempfile

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/bin/trainmem"
MODEL = "validation/configs/published/llama-2-7b.json"
GIB = 2**30
SEQ = 512  # the recipes' max_seq_len (torchtune 0.1 alpaca_cleaned_dataset's default)
# The synthetic records: 2,000 token counts drawn log-normal (median e^4.5 = 90, sigma 0.6,
# clamped to 8-1,500), each written as 2 bytes per token in both the instruction and the output,
# so that the estimate for a 32,000 vocabulary (docs/dataset.md) counts about 1.26 x as many.
RECORDS, LOG_MEDIAN, LOG_SIGMA, BYTES_PER_FIELD_TOKEN = 2000, 4.5, 0.6, 2

COMMON = ["--framework", "torchtune@0.1", "--precision", "bf16", "--batch", "2", "--seq",
          str(SEQ), "--checkpointing", "full", "--gpu", "a100-80gb"]
PLANS = {
    "LoRA q,v r8, grad_accum 64": ["--method", "lora", "--lora-rank", "8", "--lora-targets",
                                   "q,v", "--optimizer", "adamw", "--optimizer-impl", "foreach",
                                   "--grad-accum", "64"],
    "LoRA all r64, grad_accum 64": ["--method", "lora", "--lora-rank", "64", "--lora-targets",
                                    "q,k,v,o,gate,up,down,lm_head", "--optimizer", "adamw",
                                    "--optimizer-impl", "foreach", "--grad-accum", "64"],
    "full, paged AdamW in backward": ["--method", "full", "--optimizer", "paged-adamw",
                                      "--optimizer-in-backward"],
}

def write_records(path):
    rng = random.Random(0)
    with open(path, "w") as f:
        for _ in range(RECORDS):
            tokens = int(min(1500, max(8, rng.lognormvariate(LOG_MEDIAN, LOG_SIGMA))))
            text = BYTES_PER_FIELD_TOKEN * tokens
            record = {"instruction": "x" * text, "input": "", "output": "y" * text}
            f.write(json.dumps(record) + "\n")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "alpaca_like.jsonl")
        write_records(data)
        for name, args in PLANS.items():
            cmd = [BIN, "estimate", MODEL, *COMMON, *args, "--dataset", data, "--json"]
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            g, t = out["gpu"], out["dataset"]["tokens"]
            step, run = g["peak_reserved_bytes"], g["run"]["peak_reserved_bytes"]
            print(f"{name:<32} tokens p50 {t['p50']} p95 {t['p95']} max {t['max']}: "
                  f"reserved, one step at {SEQ} {step / GIB:.2f} GiB, run of "
                  f"{g['run']['steps']} micro-batches {run / GIB:.2f} GiB "
                  f"({100 * (run - step) / step:+.1f} %)")


if __name__ == "__main__":
    main()

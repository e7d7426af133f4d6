"""Probe: the live tensor bytes one Trainer.evaluate() adds on top of the model (CPU, random weights).

    /work/venvs/measure/bin/python validation/eval_probe.py --model qwen3-tiny --eval-batch 4 --seq 256

Builds the model as the harness does (validation/harness/build.py, LoRA r16 on every projection
through PEFT), hands it to a transformers Trainer with one eval batch of `--eval-batch` random
sequences of `--seq` tokens (no compute_metrics, so evaluate() passes prediction_loss_only=True),
and traces evaluate() with the harness's PhaseMemTracker. Only storages created during
evaluate() are counted, except that MemTracker books the model's parameters when the root
forward first sees them (category "parameters"); the peak less those is the evaluation's own
working set, trainmem's `trainer_eval_*` lines (weights and optimizer state are other lines). Prints one JSON object;
writes nothing. A probe (like kernels.py), not a measurement row.
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import Trainer, TrainingArguments  # noqa: E402

from harness import build, configs, methods  # noqa: E402
from harness.tracker import PhaseMemTracker  # noqa: E402

# A small vocabulary and a wide MLP, so the layer's working set, not the logits, is the
# evaluation's largest moment.
WIDE_MLP = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
            "intermediate_size": 4096, "num_attention_heads": 4, "num_key_value_heads": 2,
            "num_hidden_layers": 2, "vocab_size": 512, "max_position_embeddings": 4096,
            "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "hidden_act": "silu",
            "torch_dtype": "bfloat16"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen3-tiny", help="a harness config name, or wide-mlp")
    ap.add_argument("--config", default=None, help="or a config.json path (overrides --model)")
    ap.add_argument("--attention", default="sdpa", choices=["sdpa", "eager"])
    ap.add_argument("--precision", default="bf16", choices=["bf16", "fp32", "autocast-bf16"],
                    help="autocast-bf16: fp32 weights and TrainingArguments(bf16=True)")
    ap.add_argument("--eval-batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.config:
        with open(args.config) as f:
            cfg = json.load(f)
    elif args.model == "wide-mlp":
        cfg = dict(WIDE_MLP)
    else:
        cfg = configs.load(args.model)
    model = build.build_model(cfg, args.precision, args.attention)
    spec = {"method": "lora", "lora_rank": 16, "lora_alpha": 32, "lora_dropout": 0.0,
            "lora_targets": "q,k,v,o,gate,up,down"}
    model = methods.apply_method(model, spec)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, cfg["vocab_size"], (args.eval_batch, args.seq), generator=gen)
    data = [{"input_ids": ids[i], "labels": ids[i].clone()} for i in range(args.eval_batch)]
    with tempfile.TemporaryDirectory() as out:
        targs = TrainingArguments(output_dir=out, per_device_eval_batch_size=args.eval_batch,
                                  use_cpu=True, report_to=[], eval_strategy="no",
                                  bf16=args.precision == "autocast-bf16")
        trainer = Trainer(model=model, args=targs, eval_dataset=data)
        tracker = PhaseMemTracker(model)
        with tracker:
            tracker.mark(1, "loaded")
            metrics = trainer.evaluate()
    print(json.dumps({
        "model": args.config or args.model, "attention": args.attention, "precision": args.precision, "eval_batch": args.eval_batch,
        "seq": args.seq, "vocab": cfg["vocab_size"], "hidden": cfg["hidden_size"],
        "evaluate_peak_bytes": tracker.peak_bytes,
        "peak_categories": tracker.peak_categories,
        "evaluation_bytes": tracker.peak_bytes - tracker.peak_categories["parameters"],
        "eval_loss": metrics.get("eval_loss"),
        "torch": torch.__version__, "transformers": transformers.__version__,
    }))


if __name__ == "__main__":
    main()

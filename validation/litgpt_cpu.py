"""Measure litgpt's own fine-tuning step on CPU (issue 9): live tensor bytes per phase.

    python validation/litgpt_cpu.py --out validation/data/litgpt-cpu.jsonl

Needs its own environment (litgpt 0.4.13, the release of the config hub's commit 00af8b0d, with
the lightning it pins and torch 2.4.1): requirements-litgpt.txt. Each configuration is a
scaled-down copy of a published litgpt row (TinyLlama full, Llama-3.2-1B LoRA; since
2026-12-02 also phi-1_5/phi-2, stablelm-base-alpha-3b and gemma-2b, each built from litgpt's own
layer classes for its family): the same head size, GQA ratio, MLP ratio and embedding layout,
fewer layers, a narrower width and a smaller vocabulary, so that it runs on a 2-core CPU. The model is litgpt's own `GPT` (or
`litgpt.lora.GPT`) built from `Config` with random weights inside a bf16-true `Fabric`, and the
loop is `finetune/full.py` / `finetune/lora.py` `fit()` line for line (litgpt 0.4.13, lines cited
below): the logits stay referenced through backward and into the next forward, the loss is
litgpt's `chunked_cross_entropy`, the optimizer is the config hub's `torch.optim.AdamW`
(foreach, as on CUDA), `model.max_seq_length` is set as `fit()` sets it, and gradient accumulation
repeats forward/backward before `optimizer.step()`.

lit-gpt as of the 2023 resource tables (commit 8641822, package `lit_gpt`, its LoRA switches
named r/alpha/to_*) runs the same probe through validation/lit_gpt_shim, which maps litgpt's
names onto it (its rows' ids end in `_litgpt8641822`; Gemma did not exist then):

    git -C <litgpt clone> archive 8641822 lit_gpt | tar x -C <dir>
    PYTHONPATH=validation/lit_gpt_shim:<dir> python validation/litgpt_cpu.py --skip Gemma \
        --out validation/data/litgpt-cpu-8641822.jsonl

Live bytes are tracked by the harness's LiveStorageTracker (validation/harness/dispatch_tracker.py).
Each row also writes the HF-style config.json of its scaled model under validation/configs/litgpt/
so that `trainmem validate validation/data/litgpt-cpu.jsonl` prices the same shapes.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from harness.dispatch_tracker import LiveStorageTracker  # noqa: E402
from harness.record import SCHEMA, measured_block  # noqa: E402

# Scaled shapes: the published head size, GQA ratio, MLP ratio, vocabulary-to-width ratio and
# embedding layout, width 512, 2 layers. `arch` picks litgpt's layer classes and the HF config.
MODELS = {
    # TinyLlama-1.1B: 32 heads / 4 groups (ratio 8), I/h = 5632/2048 = 2.75, V/h = 32000/2048.
    "tinyllama-scaled": dict(arch="llama", n_embd=512, n_head=8, n_query_groups=1, head_size=64,
                             intermediate_size=1408, padded_vocab_size=8000, vocab_size=8000,
                             tie=False, rope_base=10000),
    # Llama-3.2-1B: 32 heads / 8 groups (ratio 4), I/h = 4, V/h = 128256/2048; HF ties the
    # embeddings (tie_word_embeddings: true).
    "llama32-scaled": dict(arch="llama", n_embd=512, n_head=8, n_query_groups=2, head_size=64,
                           intermediate_size=2048, padded_vocab_size=32064, vocab_size=32064,
                           tie=True, rope_base=500000),
    # phi-1_5 / phi-2 (litgpt config.py): head size 64 (phi-1_5), no GQA, I/h = 4,
    # V/h = 51200/2048 = 25, half the head rotary (phi-1_5), one shared norm, parallel block,
    # biases, an lm_head bias, GptNeoxMLP with gelu(approximate="tanh"). The HF config names
    # gelu_new and phi-2's resid_pdrop 0.1, which litgpt's classes do not run.
    "phi-scaled": dict(arch="phi", n_embd=512, n_head=8, n_query_groups=8, head_size=64,
                       intermediate_size=2048, padded_vocab_size=12800, vocab_size=12800,
                       tie=False, rope_base=10000, rotary_percentage=0.5),
    # stablelm-base-alpha-3b (litgpt Config defaults): head size 128, no GQA, I/h = 4,
    # V/h = 50688/4096, a quarter of the head rotary, parallel block with two norms, biases,
    # GptNeoxMLP with exact gelu.
    "neox-scaled": dict(arch="neox", n_embd=512, n_head=4, n_query_groups=4, head_size=128,
                        intermediate_size=2048, padded_vocab_size=6336, vocab_size=6336,
                        tie=False, rope_base=10000, rotary_percentage=0.25),
    # gemma-2b: head size 256, multi-query (1 group), I/h = 8, V/h = 256000/2048 = 125, scaled
    # embeddings, RMSNorm with the unit offset (litgpt adds it when "Gemma" is in the name),
    # GemmaMLP (gelu tanh gate); HF ties the embeddings.
    "Gemma-scaled": dict(arch="gemma", n_embd=512, n_head=2, n_query_groups=1, head_size=256,
                         intermediate_size=4096, padded_vocab_size=64000, vocab_size=64000,
                         tie=True, rope_base=10000),
}
N_LAYER = 2


# litgpt Config fields per architecture (litgpt 0.4.13 config.py: Llama, phi-1_5, the
# stablelm-base-alpha defaults, Gemma-2b).
ARCH = {
    "llama": dict(rotary_percentage=1.0, parallel_residual=False, bias=False,
                  norm_class_name="RMSNorm", norm_eps=1e-5, mlp_class_name="LLaMAMLP"),
    "phi": dict(parallel_residual=True, shared_attention_norm=True, bias=True, lm_head_bias=True,
                norm_class_name="LayerNorm", norm_eps=1e-5, mlp_class_name="GptNeoxMLP",
                gelu_approximate="tanh"),
    "neox": dict(parallel_residual=True, shared_attention_norm=False, bias=True,
                 norm_class_name="LayerNorm", norm_eps=1e-5, mlp_class_name="GptNeoxMLP",
                 gelu_approximate="none"),
    "gemma": dict(rotary_percentage=1.0, parallel_residual=False, bias=False,
                  scale_embeddings=True, norm_class_name="RMSNorm", norm_eps=1e-6,
                  mlp_class_name="GemmaMLP", gelu_approximate="tanh"),
}
# LoRA layouts of the rows: litgpt's lora_* switches (config hub yaml files at 00af8b0d).
LORA = {
    # llama-3.2-1B/lora.yaml: r 32, alpha 16, dropout 0.05, q and v.
    "qv": dict(lora_r=32, lora_alpha=16, lora_dropout=0.05, lora_query=True, lora_key=False,
               lora_value=True, lora_projection=False, lora_mlp=False, lora_head=False),
    # phi-2/lora.yaml (and gemma-2b/lora.yaml, whose dropout is 0.1): r 8, alpha 16, every
    # linear and the head.
    "all": dict(lora_r=8, lora_alpha=16, lora_dropout=0.05, lora_query=True, lora_key=True,
                lora_value=True, lora_projection=True, lora_mlp=True, lora_head=True),
}


def litgpt_config(name, lora):
    m = MODELS[name]
    kw = dict(name=name, block_size=2048, n_layer=N_LAYER, n_embd=m["n_embd"], n_head=m["n_head"],
              n_query_groups=m["n_query_groups"], head_size=m["head_size"],
              intermediate_size=m["intermediate_size"], vocab_size=m["vocab_size"],
              padded_vocab_size=m["padded_vocab_size"], rope_base=m["rope_base"])
    kw.update(ARCH[m["arch"]])
    if "rotary_percentage" in m:
        kw["rotary_percentage"] = m["rotary_percentage"]
    if lora:
        from litgpt.lora import Config
        kw.update(LORA[lora])
        return Config(**kw)
    from litgpt import Config
    return Config(**kw)


def hf_config(name):
    """The HF config.json of the scaled model, for trainmem (the shape the published row names)."""
    m = MODELS[name]
    common = {"hidden_size": m["n_embd"], "intermediate_size": m["intermediate_size"],
              "num_attention_heads": m["n_head"], "num_hidden_layers": N_LAYER,
              "max_position_embeddings": 2048, "tie_word_embeddings": m["tie"],
              "torch_dtype": "bfloat16", "vocab_size": m["vocab_size"]}
    if m["arch"] == "llama":
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                "attention_bias": False, "hidden_act": "silu", "hidden_size": m["n_embd"],
                "head_dim": m["head_size"], "intermediate_size": m["intermediate_size"],
                "max_position_embeddings": 2048, "mlp_bias": False,
                "num_attention_heads": m["n_head"], "num_hidden_layers": N_LAYER,
                "num_key_value_heads": m["n_query_groups"], "rms_norm_eps": 1e-5,
                "rope_theta": float(m["rope_base"]), "tie_word_embeddings": m["tie"],
                "torch_dtype": "bfloat16", "vocab_size": m["vocab_size"]}
    if m["arch"] == "phi":
        return {"architectures": ["PhiForCausalLM"], "model_type": "phi",
                "attention_dropout": 0.0, "embd_pdrop": 0.0, "hidden_act": "gelu_new",
                "layer_norm_eps": 1e-5, "num_key_value_heads": m["n_query_groups"],
                "partial_rotary_factor": m["rotary_percentage"], "qk_layernorm": False,
                "resid_pdrop": 0.1, "rope_theta": float(m["rope_base"]), **common}
    if m["arch"] == "neox":
        return {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox",
                "hidden_act": "gelu", "layer_norm_eps": 1e-5,
                "rotary_emb_base": m["rope_base"], "rotary_pct": m["rotary_percentage"],
                "use_parallel_residual": True, **common}
    return {"architectures": ["GemmaForCausalLM"], "model_type": "gemma", "head_dim": m["head_size"],
            "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
            "num_key_value_heads": m["n_query_groups"], "rms_norm_eps": 1e-6,
            "rope_theta": float(m["rope_base"]), **common}


def build(name, lora, precision="bf16-true"):
    import lightning as L
    fabric = L.Fabric(accelerator="cpu", devices=1, precision=precision)
    cfg = litgpt_config(name, lora)
    # full.py:150-151 / lora.py:197-199
    with fabric.init_module(empty_init=False):
        if lora:
            from litgpt.lora import GPT, mark_only_lora_as_trainable
            model = GPT(cfg)
            mark_only_lora_as_trainable(model)
        else:
            from litgpt import GPT
            model = GPT(cfg)
    model = fabric.setup(model)
    # full.py:157 / lora.py:203: instantiate_torch_optimizer("torch.optim.AdamW", ...); the config
    # hub's init_args (lr 2e-4, weight_decay 0, betas 0.9/0.95). foreach: what CUDA picks.
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-4, weight_decay=0.0, betas=(0.9, 0.95), foreach=True)
    opt = fabric.setup_optimizers(opt)
    return fabric, model, opt


def run(spec):
    from litgpt.utils import chunked_cross_entropy
    torch.manual_seed(0)
    lora = spec.get("lora") if spec["method"] == "lora" else None
    fabric, model, opt = build(spec["model"], lora, spec.get("precision", "bf16-true"))
    # fit(): full.py:211 / lora.py:271 -- the rope cache is rebuilt for the training length.
    model.max_seq_length = spec["seq"]
    gen = torch.Generator().manual_seed(0)
    vocab = MODELS[spec["model"]]["vocab_size"]
    input_ids = torch.randint(0, vocab, (spec["batch"], spec["seq"]), generator=gen)
    targets = input_ids.clone()
    tracker = LiveStorageTracker(model)
    tracker.track_external(model, input_ids, targets)
    accum = spec["grad_accum"]
    logits = None
    with tracker:
        tracker.mark(0, "loaded")
        for step in (1, 2):
            for micro in range(accum):
                tracker.mark(step, "forward")
                if lora:
                    # lora.py:304-308
                    logits = model(input_ids, lm_head_chunk_size=128)
                    logits[-1] = logits[-1][..., :-1, :]
                    loss = chunked_cross_entropy(logits, targets[..., 1:])
                else:
                    # full.py:255-258
                    logits = model(input_ids)
                    loss = chunked_cross_entropy(logits[..., :-1, :], targets[..., 1:])
                tracker.mark(step, "end_of_forward")
                tracker.mark(step, "backward")
                fabric.backward(loss / accum)
                tracker.mark(step, "end_of_backward")
                del loss  # running_loss.update(loss.detach()) keeps a 0-d copy only
            tracker.mark(step, "optimizer_step")
            opt.step()
            opt.zero_grad()
    del logits
    return tracker


def shimmed_code():
    """What validation/lit_gpt_shim runs under litgpt's names ("lit-gpt@8641822 ..."), or None
    when `litgpt` is the installed release."""
    import litgpt
    return getattr(litgpt, "SHIM_OF", None)


def provenance(command):
    import lightning
    from importlib.metadata import version
    return {"torch": torch.__version__, "litgpt": shimmed_code() or version("litgpt"),
            "lightning": lightning.__version__,
            "transformers": "none (litgpt)", "peft": "none (litgpt)",
            "python": platform.python_version(), "date": datetime.date.today().isoformat(),
            "command": command, "host": f"{platform.machine()}, {os.cpu_count()} cores"}


SPECS = [
    # lgch_tinyllama_full: full.yaml micro_batch 4, global_batch 32 -> 8 micro-batches per step.
    dict(model="tinyllama-scaled", method="full", batch=4, seq=256, grad_accum=1),
    dict(model="tinyllama-scaled", method="full", batch=4, seq=256, grad_accum=2),
    # lgch_llama32_1b_lora: lora.yaml micro_batch 1, global 8.
    dict(model="llama32-scaled", method="lora", lora="qv", batch=1, seq=256, grad_accum=1),
    dict(model="llama32-scaled", method="full", batch=1, seq=256, grad_accum=1),
    dict(model="tinyllama-scaled", method="lora", lora="qv", batch=4, seq=256, grad_accum=1),
    # The other families of the published litgpt rows (added 2026-12-02): Phi (lg23_phi15_*,
    # lgch_phi2_lora), GPT-NeoX (lg23_stablelm3b_*), Gemma (lgch_gemma_2b_lora).
    dict(model="phi-scaled", method="lora", lora="qv", batch=2, seq=256, grad_accum=1),
    dict(model="phi-scaled", method="lora", lora="all", batch=2, seq=256, grad_accum=1),
    dict(model="phi-scaled", method="full", batch=2, seq=256, grad_accum=1),
    dict(model="neox-scaled", method="lora", lora="qv", batch=2, seq=256, grad_accum=1),
    dict(model="neox-scaled", method="full", batch=2, seq=256, grad_accum=1),
    dict(model="Gemma-scaled", method="lora", lora="all", batch=2, seq=256, grad_accum=1),
    dict(model="Gemma-scaled", method="full", batch=1, seq=256, grad_accum=1),
    # bf16-mixed (lg23_stablelm3b_lora_bf16mixed_mb1, litgpt's LoRA tutorial): fp32 weights under
    # autocast.
    dict(model="neox-scaled", method="lora", lora="qv", batch=2, seq=256, grad_accum=1,
         precision="bf16-mixed"),
    dict(model="tinyllama-scaled", method="lora", lora="qv", batch=4, seq=256, grad_accum=1,
         precision="bf16-mixed"),
]


def row_of(spec, tracker, command):
    model_path = f"validation/configs/litgpt/{spec['model']}.json"
    cfg = {"model": model_path, "framework": "litgpt", "method": spec["method"],
           "optimizer": "adamw", "optimizer_impl": "foreach",
           # bf16-true: bf16 weights, no autocast; bf16-mixed: fp32 weights under torch.autocast
           # (lightning fabric/plugins/precision/amp.py MixedPrecision.forward_context).
           "precision": "autocast-bf16" if spec.get("precision") == "bf16-mixed" else "bf16",
           "checkpointing": "none", "attention": "sdpa", "batch": spec["batch"], "seq": spec["seq"],
           "grad_accum": spec["grad_accum"], "loss": None,
           # The loop above runs fit()'s training step only, not validate() or
           # generate_example(): priced as such (--step-only).
           "step_only": True}
    if spec["method"] == "lora":
        lo = LORA[spec["lora"]]
        mlp = "up,down" if MODELS[spec["model"]]["arch"] in ("phi", "neox") else "gate,up,down"
        targets = "q,v" if spec["lora"] == "qv" else f"q,k,v,o,{mlp},lm_head"
        cfg.update(lora_rank=lo["lora_r"], lora_alpha=lo["lora_alpha"],
                   lora_dropout=lo["lora_dropout"], lora_targets=targets)
    method = spec["method"] + ("-all" if spec.get("lora") == "all" else "")
    rid = "_".join(["litgpt", spec["model"], method, f"b{spec['batch']}", f"s{spec['seq']}"]
                   + ([f"ga{spec['grad_accum']}"] if spec["grad_accum"] > 1 else [])
                   + (["bf16mixed"] if spec.get("precision") == "bf16-mixed" else [])
                   + (["litgpt8641822"] if shimmed_code() else []))
    return {"schema": SCHEMA, "id": rid, "config": cfg,
            "measured": measured_block(tracker, "dispatch"), "provenance": provenance(command)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=None, help="run the specs whose JSON contains this")
    ap.add_argument("--skip", default=None, help="leave out the specs whose JSON contains this")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    os.makedirs(os.path.join(HERE, "configs", "litgpt"), exist_ok=True)
    for name in MODELS:
        with open(os.path.join(HERE, "configs", "litgpt", f"{name}.json"), "w") as f:
            json.dump(hf_config(name), f, indent=2)
            f.write("\n")
    command = "python " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:])
    with open(args.out, "w") as out:
        for spec in SPECS:
            if args.only and args.only not in json.dumps(spec):
                continue
            if args.skip and args.skip in json.dumps(spec):
                continue
            tracker = run(spec)
            row = row_of(spec, tracker, command)
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(row["id"], row["measured"]["peak_bytes"], row["measured"]["peak_phase"],
                  json.dumps(row["measured"]["phase_peaks"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Turn the published GPU data points into trainmem measurement rows.

Input: the shared list of 79 published GPU measurements (../shared/data/gpu-published.jsonl in
the project layout; pass its path). Output: validation/data/gpu-published.jsonl (rows in the
measurement schema, trainmem.measurement/1, with the metric and the citation kept per row) and
validation/data/gpu-published-excluded.jsonl (every row left out, with the reason).

Deterministic: the same input gives byte-identical output (no dates, sorted keys). Never edit the
output by hand; change the rules here and re-run:

    python3 validation/published/convert.py /work/shared/data/gpu-published.jsonl

Each rule below reads the row's own fields (method, optimizer, precision, micro_batch, seq_len,
gradient_checkpointing, framework, caveats) and states in words what it maps them to. A row is
kept only when every setting that moves memory is stated by its source or by the recipe the
source names; otherwise it goes to the excluded file with the reason.
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "validation" / "data" / "gpu-published.jsonl"
EXCLUDED = ROOT / "validation" / "data" / "gpu-published-excluded.jsonl"

# Model name (as the row writes it) -> config.json, repo-relative. Configs under
# validation/configs/published/ are the published Hugging Face config.json fields.
MODELS = {
    "meta-llama/Llama-3.2-3B": "validation/configs/published/llama-3.2-3b.json",
    "meta-llama/Llama-3.2-1B": "validation/configs/published/llama-3.2-1b.json",
    "meta-llama/Llama-2-7b(-hf)": "validation/configs/published/llama-2-7b.json",
    "meta-llama/Llama-2-13b(-hf)": "validation/configs/published/llama-2-13b.json",
    "Meta-Llama-3-8B": "validation/configs/published/meta-llama-3-8b.json",
    "Llama 3.1 8B": "validation/configs/llama-3.1-8b.json",
    "mistralai/Mistral-7B-v0.1": "mistral-7b-v0.1",
    "TinyLlama-1.1B": "validation/configs/published/tinyllama-1.1b.json",
    "microsoft/phi-1_5": "validation/configs/published/phi-1_5.json",
    "microsoft/phi-2": "validation/configs/published/phi-2.json",
    "stabilityai/stablelm-base-alpha-3b": "validation/configs/published/stablelm-base-alpha-3b.json",
    "google/gemma-2b": "validation/configs/published/gemma-2b.json",
    "Llama 3.1 70B": "meta-llama/Llama-3.1-70B",
}
# Decoder families trainmem does not price (no adapter in src/model/adapters/).
UNSUPPORTED_FAMILY = {
    "bigscience/bloomz-7b1": "bloom",
}
# The device as the row names it -> a `trainmem gpus` id (its compute capability and capacity
# feed the allocator replay). The A10G is an A10 variant (sm86, 24 GB): the A10 entry stands in.
DEVICES = {
    "NVIDIA A100-SXM4-40GB": "a100-40gb",
    "NVIDIA A10G 24GB": "a10",
    "RTX 4090 24GB": "rtx-4090",
    "NVIDIA L40S 48GB": "l40s",
    "8x A100 (80GB assumed)": "a100-80gb",  # the row's own assumption (README: "8x A100")
}
UNIT_BYTES = {"GB": 10**9, "GiB": 2**30, "MiB": 2**20, "bytes": 1}


# Multi-GPU rows left out, with what keeps each out (none today).
MULTI_GPU_EXCLUDED = {}

# lit-gpt 8641822 finetune/lora.py:25-30: batch_size 128 of micro_batch_size, accumulated
# (gradient_accumulation_iters = batch_size // micro_batch_size) under Fabric's
# no_backward_sync, which FSDP runs as no_sync (FrameworkBehaviour
# skips_grad_sync_while_accumulating).
LIT_GPT_BATCH_SIZE = 128


def layout_of(r):
    """The row's layout in trainmem's layout settings, where its source states one trainmem
    prices: torchtune's distributed recipes (FSDP2, full shard over the stated GPUs; with
    fsdp_cpu_offload, parameters, gradients and optimizer state on the host; with
    custom_sharded_layers, the embedding and the output as FSDP2 units of their own)."""
    dist = (r.get("distributed") or "").lower()
    # lit-gpt 8641822 finetune/lora.py:70-79: Fabric's FSDPStrategy (torch 2.1's FSDP1, full
    # shard, a unit per Block, limit_all_gathers) when devices > 1.
    lit = re.match(r"(\d+) gpus,? (fabric fsdpstrategy|fsdp)", dist)
    if lit and r["id"].startswith("lg23"):
        return {"engine": "fsdp", "fsdp": "full", "fsdp_version": 1, "gpus": int(lit.group(1))}
    gpus = re.match(r"(\d+) gpus fsdp2 full shard", dist)
    if not gpus or not r["id"].startswith("ttn_l31"):
        return None
    layout = {"engine": "fsdp", "fsdp": "full", "fsdp_version": 2, "gpus": int(gpus.group(1))}
    if "fsdp_cpu_offload=true" in dist.replace(" ", ""):
        layout["offload"] = "both"
    # torchtune's custom_sharded_layers, as the row states it ("tok_embeddings/output")
    units = re.search(r"custom_sharded_layers ([\w./]+)", dist)
    if units:
        layout["custom_sharded_layers"] = units.group(1).replace("/", ",")
    return layout


def metric_of(text):
    """The figure the row reports, from its own metric description."""
    t = text.lower()
    if "nvidia-smi" in t:
        return "nvidia-smi"
    if "max_memory_reserved" in t:
        return "max_memory_reserved"
    if "max_memory_allocated" in t:
        return "max_memory_allocated"
    return None


def exclusion(r):
    """The reason a row stays out, or None."""
    name = r["model"]["name"]
    arch = (r["model"].get("arch") or "").lower()
    if "encoder-only" in arch or "bert" in name.lower():
        return "encoder-only model (BERT): trainmem prices decoder-only language models"
    if "T0" in name or "mt0" in name:
        return "encoder-decoder model (T5 family): trainmem prices decoder-only language models"
    if r["kind"] == "oom_lower_bound":
        return "out-of-memory report: a lower bound, not a measured peak"
    if r["kind"] == "static_weights" or r["kind"] == "cuda_context":
        return "a snapshot after loading, not a training-step peak"
    if r["measured"]["unit"] not in UNIT_BYTES:
        return f"unit '{r['measured']['unit']}' is ambiguous in the source (GB or GiB)"
    if "SUSPECT" in r["id"]:
        return "inconsistent with its own setup (below the params + grads + AdamW floor)"
    if "method unclear" in (r.get("seq_len_notes") or ""):
        return "batch and sequence length not stated consistently by the source"
    dist = (r.get("distributed") or "").lower()
    if ("gpus" in dist or "fsdp" in dist or "deepspeed" in dist or "zero-3" in dist) \
            and layout_of(r) is None:
        return MULTI_GPU_EXCLUDED.get(r["id"], "multi-GPU layout the source does not state "
                                                "completely (engine, sharding, GPUs)")
    if name in UNSUPPORTED_FAMILY:
        return f"model family '{UNSUPPORTED_FAMILY[name]}' is not priced"
    if name not in MODELS:
        return f"no config for model '{name}'"
    gc = r.get("gradient_checkpointing")
    if isinstance(gc, str) and "unknown" in gc:
        return "activation checkpointing and optimizer settings not stated by the source"
    m = r["method"].lower()
    for word, why in [("lora-fa", "LoRA-FA (frozen A, its own optimizer)"), ("ia3", "IA3"),
                      ("prompt tuning", "prompt tuning"), ("prefix tuning", "prefix tuning"),
                      ("tinylora", "TinyLoRA"), ("osf", "OSF")]:
        if word in m:
            return f"PEFT method not modelled: {why}"
    if metric_of(r["measured"]["metric"]) is None:
        return "metric not stated"
    return None


def lora_settings(method):
    """Rank and targets from the row's method text."""
    rank = re.search(r"\br=(\d+)", method)
    m = method.lower()
    if "gate/up/down" in m:
        targets = "gate,up,down"
    elif "q,k,v,output_proj + mlp" in m or "all linear" in m or "q,k,v,proj,mlp" in m:
        # litgpt's lora_query/key/value/projection/mlp: every linear of the layer (a plain MLP
        # has no gate, and the target adapts nothing there).
        targets = "q,k,v,o,gate,up,down"
    elif "q,k,v_proj" in m or "q,k,v" in m:
        targets = "q,k,v"
    else:  # q,v / q_proj+v_proj / query+value / q+v
        targets = "q,v"
    if ("final output projection" in m or "incl. output projection" in m
            or "and lm_head" in m or "mlp,head" in m):
        targets += ",lm_head"
    return (int(rank.group(1)) if rank else None), targets


# train.global_batch_size and micro_batch_size of the config-hub yaml files the litgpt rows cite,
# read from Lightning-AI/litgpt at commit 00af8b0d (config_hub/finetune/<model>/<method>.yaml).
CONFIG_HUB_BATCHES = {
    "tiny-llama/full.yaml": (32, 4),
    "llama-3.2-1B/lora.yaml": (8, 1),
    "llama-3.2-3B/lora.yaml": (8, 1),
    "llama-3-8b/lora.yaml": (8, 1),
    "llama-3-8b/qlora.yaml": (8, 2),
    "llama-2-7b/lora.yaml": (8, 2),
    "llama-2-7b/qlora.yaml": (8, 2),
    "mistral-7b/lora.yaml": (8, 2),
    "mistral-7b/qlora.yaml": (8, 2),
    "gemma-2b/lora.yaml": (6, 2),
    "phi-2/lora.yaml": (8, 4),
}
# lora_dropout of those yaml files where it is not litgpt's 0.05 (the profile's default).
CONFIG_HUB_LORA_DROPOUT = {
    "gemma-2b/lora.yaml": 0.1,
}

# PEFT's MetaMathQA runs: the tokenizer truncates every sample at max_seq_length
# (peft@d787f51b method_comparison/MetaMathQA/utils.py:204 `tokenizer.model_max_length =
# max_seq_length`, data.py:95 `input_ids[: tokenizer.model_max_length]`,
# default_training_params.json "max_seq_length": 768), and data.py:27 chose its 1,300-character
# filter for that limit ("with a token limit of 768 for query + response, we have to exclude all
# texts with length > 1304"). The shared caveat's "~500 tokens" is a guess in characters.
PEFT_MMQA_MAX_SEQ_LENGTH = 768

# lit-gpt's finetune scripts from PR #184 (2023-06-21) until the data refactor #950 (2024-02-29)
# run the longest training sample first: 8641822 finetune/lora.py train() calls
# `get_batch(fabric, train_data, longest_seq_ix if iter_num == 0 else None)`, and get_batch sets
# `ix[0] = longest_seq_ix` ("force the longest sample at the beginning so potential OOMs happen
# right away"); every later micro-batch is random. So the run's one step at the longest length is
# its first, with no previous step's graph held, and the step after it is a typical sample: the
# median of lit-gpt's own Alpaca histogram (8641822 tutorials/prepare_dataset.md,
# images/prepare_dataset/alpaca.jpg: "Min: 42, Max: 1304, Median: 110"). The rows' figures do not
# depend on that second length anywhere from 42 to 600 tokens (docs/accuracy.md, ninth pass).
LITGPT_LONGEST_FIRST_NOTE = "iteration 0 force-includes the longest"
ALPACA_MEDIAN_TOKENS = 110

# gradient_accumulation_steps of the torchtune recipe configs the April 2024 tutorial rows name
# ("Config llama2/7B_lora_single_device at ff594c231"; the tutorial: "All the finetuning runs
# below use the llama2/7B_lora_single_device config"), by row id prefix. The README's Llama-3.1
# rows say "batch size 2 (without gradient accumulation)" (README.md at 30b8519e8), so they keep 1
# although their configs set 64 and 16; PR #527's low-memory config sets 1.
TORCHTUNE_RECIPE_ACCUM = {
    "ttn_tut_l2_7b_lora_": ("llama2/7B_lora_single_device.yaml", "ff594c231", 64),
    "ttn_tut_l2_7b_qlora": ("llama2/7B_qlora_single_device.yaml", "ff594c231", 16),
}


def plan_of(r):
    """The row's setup in trainmem's flag vocabulary, and notes on each choice."""
    src = r["id"]
    method = r["method"].lower()
    fw = r["framework"].lower()
    cfg = {"model": MODELS[r["model"]["name"]], "batch": int(r["micro_batch"]), "grad_accum": 1}
    notes = []
    # Sequence: the longest sequence of the peak batch.
    if isinstance(r["seq_len"], int):
        cfg["seq"] = r["seq_len"]
        if LITGPT_LONGEST_FIRST_NOTE in (r.get("seq_len_notes") or ""):
            cfg["step_lengths"] = [cfg["seq"], ALPACA_MEDIAN_TOKENS]
            notes.append(f"step_lengths: lit-gpt runs the longest sample ({cfg['seq']} tokens) "
                         "at iteration 0 (finetune/lora.py get_batch), then random ones: the "
                         f"second step at Alpaca's median, {ALPACA_MEDIAN_TOKENS} tokens "
                         "(tutorials/prepare_dataset.md histogram)")
    else:
        # MetaMathQA: the longest batch is not logged. As with the 2023 litgpt rows, an unknown
        # longest batch is priced at the bound the source states.
        cfg["seq"] = PEFT_MMQA_MAX_SEQ_LENGTH
        notes.append(f"seq {PEFT_MMQA_MAX_SEQ_LENGTH}: the run's max_seq_length, which truncates "
                     "every sample and for which its 1,300-character filter was chosen (data.py); "
                     "the longest batch is not logged, so this is a bound")
    # Method.
    if method.startswith("full"):
        cfg["method"] = "full"
    elif "layernorm tuning" in method:
        cfg["method"] = "freeze"
        cfg["train_modules"] = "norm"
    elif "qlora" in method:
        cfg["method"] = "qlora"
    else:
        cfg["method"] = "lora"
    if cfg["method"] in ("lora", "qlora"):
        rank, targets = lora_settings(r["method"])
        cfg["lora_rank"] = rank
        cfg["lora_targets"] = targets
        if "dora" in method:
            cfg["dora"] = True
        drop = re.search(r"dropout[ =]?(0?\.\d+)", method)
        if drop and float(drop.group(1)) > 0:
            cfg["lora_dropout"] = float(drop.group(1))
    # Framework and its versions.
    versions = []
    if src.startswith("peft_mmqa"):
        cfg["framework"] = "hf"
        # PEFT's method_comparison run.py: `outputs = model(**batch); loss = outputs.loss;
        # loss.backward()` keeps the outputs; batches right-padded with an attention mask.
        cfg["keep_outputs"] = True
        cfg["padding_mask"] = True
        # The loop passes no use_cache=False and trains without gradient checkpointing (use_gc
        # false), so the call takes Llama-3.2's config use_cache (true): the output carries a
        # DynamicCache, kept with it. The runs' own `mem allocated avg` (after each step) grows by
        # about 1.52-1.58 MB per token of mean batch length across the six runs, which the kept
        # logits alone (1.03 MB) do not reach and logits plus cache (1.48 MB) do.
        cfg["use_cache"] = True
        versions.append("transformers=" + re.search(r"transformers ([\d.]+)", fw).group(1))
        versions.append("bitsandbytes=" + re.search(r"bitsandbytes ([\d.]+)", fw).group(1))
        notes.append("custom PEFT loop keeps the model outputs; padded batches carry a mask")
        notes.append("the model call builds a DynamicCache (config use_cache; no use_gc)")
    elif src.startswith("lg"):
        cfg["framework"] = "litgpt"
        bnb = re.search(r"bitsandbytes ([\d.]+)", fw)
        if bnb:
            versions.append("bitsandbytes=" + bnb.group(1))
        elif "00af8b0d" in r["source"].get("configs", ""):
            # The config-hub benchmarks ran litgpt at commit 00af8b0d, whose pyproject.toml pins
            # "bitsandbytes==0.42.0" in its `all` extra (line 41; bumped only in d2ed13c3,
            # 2024-12-28): the version that installs with `pip install 'litgpt[all]'` then.
            versions.append("bitsandbytes=0.42.0")
            notes.append("bitsandbytes 0.42.0: the version litgpt's pyproject.toml pinned at the "
                         "configs' commit 00af8b0d")
            # The yaml's train.global_batch_size / micro_batch_size on one device: fit() runs
            # that many micro-batches per optimizer step (litgpt@00af8b0d args.py
            # gradient_accumulation_iters; finetune/full.py:253-264, lora.py:302-317).
            yaml = r["source"]["location"].split()[0]
            if yaml in CONFIG_HUB_LORA_DROPOUT and cfg["method"] in ("lora", "qlora"):
                cfg["lora_dropout"] = CONFIG_HUB_LORA_DROPOUT[yaml]
                notes.append(f"lora_dropout {cfg['lora_dropout']}: {yaml} at 00af8b0d")
            if yaml in CONFIG_HUB_BATCHES:
                global_batch, micro = CONFIG_HUB_BATCHES[yaml]
                if micro == cfg["batch"] and global_batch > micro:
                    cfg["grad_accum"] = global_batch // micro
                    notes.append(f"grad_accum {global_batch // micro}: {yaml} at 00af8b0d has "
                                 f"global_batch_size {global_batch}, micro_batch_size {micro}")
    elif src.startswith("ttn"):
        tt = "0.3" if "~0.3" in fw else "0.1"
        cfg["framework"] = "torchtune@" + tt
        notes.append(f"torchtune {tt} recipe behaviour (the row's framework: {r['framework']})")
        # The README's runs compiled the model and the loss (torchtune@30b8519e README.md:76,
        # "torch compile enabled"; recipes/*_single_device.py compile_loss under cfg.compile).
        if "torch.compile on" in (r.get("seq_len_notes") or ""):
            cfg["compile"] = True
            notes.append("compile: the row's seq_len_notes say torch.compile on (README note)")
        for prefix, (yaml, commit, steps) in TORCHTUNE_RECIPE_ACCUM.items():
            if src.startswith(prefix) and not r.get("grad_accum"):
                cfg["grad_accum"] = steps
                notes.append(f"grad_accum {steps}: recipes/configs/{yaml} at {commit} "
                             f"(gradient_accumulation_steps)")
    # Precision.
    p = r["precision"].lower()
    if "bf16-mixed" in p:
        cfg["precision"] = "autocast-bf16"
    else:
        cfg["precision"] = "bf16"  # bf16-true / pure bf16 weights
    # Quantisation: litgpt's bnb.nf4 has no double quant, bnb.nf4-dq has; torchao NF4 does.
    if cfg["method"] == "qlora":
        if "nf4-dq" in method or "torchao" in method or "double-quant" in method:
            cfg["double_quant"] = True
        elif "bnb.nf4" in method:
            cfg["double_quant"] = False
        # litgpt and torchtune do not upcast norms/embeddings (no prepare_model_for_kbit_training).
        cfg["prepare_kbit"] = False
    # Optimizer.
    o = (r["optimizer"] or "").lower()
    if "pagedadamw8bit" in o:
        cfg["optimizer"] = "paged-adamw-8bit"
    elif "pagedadamw" in o:
        cfg["optimizer"] = "paged-adamw"
    else:
        cfg["optimizer"] = "adamw"
    # The implementation, always stated: these runs build torch.optim.AdamW themselves (PEFT's
    # method_comparison run.py, litgpt's instantiate_torch_optimizer, torchtune's config), and
    # without fused=True torch picks foreach for CUDA tensors
    # (torch/optim/optimizer.py _default_to_fused_or_foreach). trainmem's own default is the HF
    # Trainer's adamw_torch_fused, which none of these runs used unless the source says "fused".
    if "fused" in o.replace("fused into backward", ""):
        cfg["optimizer_impl"] = "fused"
    elif cfg["optimizer"] == "adamw":
        cfg["optimizer_impl"] = "foreach"
    if "optimizer_in_bwd" in o:
        cfg["optimizer_in_backward"] = True
    layout = layout_of(r)
    if layout:
        cfg["layout"] = layout
        notes.append(f"layout: {r['distributed']}")
    # Checkpointing: true, or the source's "yes: ..." (lit-gpt's FSDP activation_checkpointing_policy).
    ckpt = r["gradient_checkpointing"]
    on = ckpt is True or (isinstance(ckpt, str) and ckpt.lower().startswith("yes"))
    cfg["checkpointing"] = "full" if on else "none"
    if layout and src.startswith("lg23"):
        cfg["grad_accum"] = LIT_GPT_BATCH_SIZE // cfg["batch"]
        notes.append(f"grad_accum {cfg['grad_accum']}: lit-gpt 8641822 finetune/lora.py "
                     f"batch_size {LIT_GPT_BATCH_SIZE} // micro_batch_size {cfg['batch']}")
    cfg["attention"] = "sdpa"
    if versions:
        cfg["versions"] = ",".join(versions)
    return cfg, notes


def full_precision(figure, text):
    """The source's own quote of a rounded figure: the longest number in `text` that rounds to
    `figure` at its printed precision (PR #527 quotes 13.993540096 GB where the row says 13.99)."""
    places = len(figure.partition(".")[2])
    quotes = [q for q in re.findall(r"\d+\.\d+", text)
              if round(float(q), places) == float(figure) and len(q) > len(figure)]
    return max(quotes, key=len) if quotes else figure


def measured_rows(r):
    """One row per figure the source reports (some report allocated beside reserved), each with
    the figure as published."""
    m = r["measured"]
    metric = metric_of(m["metric"])
    published = f"{m['value']} {m['unit']}"
    out = [(metric, round(float(m["value"]) * UNIT_BYTES[m["unit"]]), "", published)]
    extra = re.search(r"\(allocated ([\d.]+) GB\)", m["metric"])
    if extra and metric == "max_memory_reserved":
        figure = full_precision(extra.group(1), r["source"].get("location", ""))
        out.append(("max_memory_allocated", round(float(figure) * UNIT_BYTES["GB"]), "_allocated",
                    f"{figure} GB"))
    return out


def convert(rows):
    kept, excluded = [], []
    for r in rows:
        why = exclusion(r)
        if why:
            excluded.append({"id": r["id"], "reason": why, "source": r["source"]["url"]})
            continue
        cfg, notes = plan_of(r)
        for metric, value, suffix, published in measured_rows(r):
            kept.append({
                "schema": "trainmem.measurement/1",
                "id": r["id"] + suffix,
                "config": cfg,
                "measured": {
                    "peak_bytes": value,
                    "metric": metric,
                    "device": r["gpu"],
                    "device_id": DEVICES.get(r["gpu"], ""),
                    "tracker": "published",
                    "value_as_published": published,
                },
                "source": {**r["source"], "published_id": r["id"]},
                "confidence": r["confidence"],
                "caveats": r["caveats"],
                "conversion_notes": notes,
                "provenance": {
                    "command": "python3 validation/published/convert.py "
                               "<shared>/data/gpu-published.jsonl",
                    "framework_as_published": r["framework"],
                },
            })
    return kept, excluded


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: convert.py PATH/TO/gpu-published.jsonl")
    rows = [json.loads(line) for line in Path(argv[1]).read_text().splitlines() if line.strip()]
    kept, excluded = convert(rows)
    OUT.write_text("".join(json.dumps(k, sort_keys=True) + "\n" for k in kept))
    EXCLUDED.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in excluded))
    print(f"{len(rows)} published rows: {len(kept)} measurement rows written to "
          f"{OUT.relative_to(ROOT)}, {len(excluded)} excluded (reasons in "
          f"{EXCLUDED.relative_to(ROOT)})")


if __name__ == "__main__":
    main(sys.argv)

#!/usr/bin/env python3
"""The state each optimizer keeps after its first step, on CPU, for a model built from a config.

For every optimizer trainmem prices (`--optimizer`), the real implementation a run uses (the HF
Trainer's `create_optimizer` for its `optim` strings, else the library's class) steps the model's
parameters once, in bf16 and in fp32 (a full fine-tune: every parameter trains), and the
probe sums the bytes of what `optimizer.state` then holds:

- `state_bytes`: every tensor with at least one dimension, once per storage (exp_avg, exp_avg_sq,
  momentum buffers, 8-bit states and their absmax blocks, factored accumulators);
- `scalar_bytes`: 0-dim tensors (torch's `step` counters, 4 B per parameter tensor), which
  trainmem does not price;
- `shared_bytes`: tensors every parameter's state points to (bitsandbytes' 256-value quantisation
  maps), counted once, not priced either.

Only the states are compared (tests/golden/optimizer_states_test.cpp: trainmem's optimizer-state
line equals `state_bytes`); the step's own scratch depends on the kernels, and bitsandbytes runs
pure-PyTorch fallbacks on CPU where CUDA runs one fused kernel. Paged optimizers fall back to
ordinary tensors on CPU (bitsandbytes get_state_buffer): the same bytes, not in unified memory;
except paged AdEMAMix, whose double buffer calls get_paged without that fallback
(ademamix.py _get_state_double_buffer), so it cannot run here and is not probed.

    cd validation && python optimizer_state_probe.py --config configs/llama-tiny.json \
        --config configs/gpt2-tiny.json --out data/optimizer-states.json
"""
import argparse
import json
import sys

import torch
import transformers

from probe_output import cpu_provenance, write_json


def bnb(name):
    import bitsandbytes as bnb_lib
    return getattr(bnb_lib.optim, name)


class Combined:
    """Muon for the hidden 2-D matrices and AdamW for the rest, as Muon is run (torch.optim.Muon
    takes only 2-D parameters; embeddings and the head step with AdamW, Jordan et al. 2024)."""

    def __init__(self, model):
        tables = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
        tables.add(id(model.get_output_embeddings().weight))
        hidden, rest = [], []
        for p in model.parameters():
            (hidden if p.ndim == 2 and id(p) not in tables else rest).append(p)
        self.parts = [torch.optim.Muon(hidden, lr=1e-3, adjust_lr_fn="match_rms_adamw"),
                      torch.optim.AdamW(rest, lr=1e-3, foreach=False)]

    def step(self):
        for o in self.parts:
            o.step()

    @property
    def state(self):
        merged = {}
        for o in self.parts:
            merged.update(o.state)
        return merged


def adam_mini(model, config):
    from adam_mini import Adam_mini
    heads = config.num_attention_heads
    return Adam_mini(named_parameters=model.named_parameters(), lr=1e-3,
                     dim=config.hidden_size, n_heads=heads,
                     n_kv_heads=getattr(config, "num_key_value_heads", None) or heads)


def hf_trainer(optim):
    """The optimizer the HF Trainer builds for `optim` (Trainer.create_optimizer: the class of
    get_optimizer_cls_and_kwargs, and for bitsandbytes' 8-bit ones the 32-bit override of every
    nn.Embedding weight, transformers >= 4.52)."""
    def make(model):
        import tempfile
        args = transformers.TrainingArguments(output_dir=tempfile.mkdtemp(), optim=optim,
                                              use_cpu=True, report_to=[], learning_rate=1e-4)
        return transformers.Trainer(model=model, args=args).create_optimizer()
    return make


def optimizers(config):
    """trainmem's name -> what a run of it constructs: the HF Trainer for an `optim` string
    (transformers/trainer_optimizer.py), the library's class where HF has no string."""
    p = lambda model: [q for q in model.parameters() if q.requires_grad]
    return {
        "adamw": hf_trainer("adamw_torch"),
        "sgd": hf_trainer("sgd"),
        "sgd-momentum": lambda m: torch.optim.SGD(p(m), lr=1e-3, momentum=0.9, foreach=False),
        "adafactor": hf_trainer("adafactor"),
        "adamw-8bit": hf_trainer("adamw_bnb_8bit"),
        "adamw-32bit": lambda m: bnb("AdamW")(p(m), lr=1e-3),  # bitsandbytes.optim.AdamW
        "paged-adamw": hf_trainer("paged_adamw_32bit"),
        "paged-adamw-8bit": hf_trainer("paged_adamw_8bit"),
        "lion": lambda m: __import__("lion_pytorch").Lion(p(m), lr=1e-4),  # lion-pytorch
        "lion-32bit": hf_trainer("lion_32bit"),
        "lion-8bit": hf_trainer("lion_8bit"),
        "paged-lion": hf_trainer("paged_lion_32bit"),
        "paged-lion-8bit": hf_trainer("paged_lion_8bit"),
        "rmsprop-32bit": hf_trainer("rmsprop_bnb"),
        "rmsprop-8bit": hf_trainer("rmsprop_bnb_8bit"),
        "ademamix": hf_trainer("ademamix"),
        "ademamix-8bit": hf_trainer("ademamix_8bit"),
        "muon": lambda m: Combined(m),
        "adam-mini": lambda m: adam_mini(m, config),
    }


def state_figures(opt):
    """(state_bytes, scalar_bytes, shared_bytes) of what the optimizer holds."""
    owners = {}  # storage -> number of parameters whose state holds it
    sizes = {}
    scalar = 0
    for st in opt.state.values():
        for v in st.values():
            if not torch.is_tensor(v):
                continue
            if v.dim() == 0:
                scalar += v.untyped_storage().nbytes()
                continue
            key = v.untyped_storage().data_ptr()
            owners[key] = owners.get(key, 0) + 1
            sizes[key] = v.untyped_storage().nbytes()
    state = sum(sizes[k] for k, n in owners.items() if n == 1)
    shared = sum(sizes[k] for k, n in owners.items() if n > 1)
    return state, scalar, shared


def probe(config_path, dtype):
    config = transformers.AutoConfig.from_pretrained(config_path)
    rows = {}
    for name, make in optimizers(config).items():
        torch.manual_seed(0)
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype)
        opt = make(model)
        for q in model.parameters():
            q.grad = torch.randn_like(q) * 1e-3
        opt.step()
        state, scalar, shared = state_figures(opt)
        rows[name] = {"state_bytes": state, "scalar_bytes": scalar, "shared_bytes": shared}
        print(f"{str(dtype):>15} {name:<18} state {state:>12,} B  scalars {scalar:>6,} B  "
              f"shared {shared:>6,} B", file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", action="append", required=True, help="repeat for more models")
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.set_num_threads(1)
    import bitsandbytes, lion_pytorch, adam_mini  # noqa: F401 (versions below)
    from importlib.metadata import version
    doc = {
        "schema": "trainmem.optimizer-state-probe/1",
        "provenance": cpu_provenance(
            "optimizer_state_probe.py", sys.argv[1:], transformers=transformers.__version__,
            bitsandbytes=version("bitsandbytes"), lion_pytorch=version("lion-pytorch"),
            adam_mini=version("adam-mini")),
        "models": {c: {"bf16": probe(c, torch.bfloat16), "fp32": probe(c, torch.float32)}
                   for c in a.config},
    }
    write_json(doc, a.out)


if __name__ == "__main__":
    main()

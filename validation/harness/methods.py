"""Training methods: full, LoRA through real PEFT, and freeze (requires_grad on chosen tensors).

Module names use trainmem's short vocabulary (q,k,v,o,gate,up,down,norm,embed,lm_head;
experts and router for MoE) so a row's
config can be replayed by `trainmem estimate` unchanged.
"""
import contextlib
import re

import torch

from peft import LoraConfig, get_peft_model

LINEAR_OF_SHORT = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj",
                   "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}
_LAYER_RE = re.compile(r"\.layers\.(\d+)\.")


def short_name(param_name):
    """trainmem short name of a parameter (q, k, ..., norm, embed, lm_head), or None."""
    if "embed_tokens" in param_name:
        return "embed"
    if param_name.startswith("lm_head") or ".lm_head." in param_name:
        return "lm_head"
    if param_name.endswith("norm.weight"):
        return "norm"
    if ".experts." in param_name:
        return "experts"
    if param_name.endswith("mlp.gate.weight"):  # MoE router (a Linear-like weight, not an nn.Linear)
        return "router"
    for short, linear in LINEAR_OF_SHORT.items():
        if f".{linear}." in param_name:
            return short
    return None


def apply_lora(model, spec):
    """Wrap with PEFT; adapters follow PEFT's default and are upcast to fp32 on a bf16 base."""
    targets = [LINEAR_OF_SHORT[t] for t in spec["lora_targets"].split(",")]
    cfg = LoraConfig(r=spec["lora_rank"], lora_alpha=spec["lora_alpha"],
                     lora_dropout=spec["lora_dropout"], target_modules=targets,
                     bias="none", task_type="CAUSAL_LM")
    return get_peft_model(model, cfg)


def apply_freeze(model, spec):
    """Train only `train_modules` in `train_layers`; non-layer tensors follow train_modules."""
    modules = set(spec["train_modules"].split(","))
    layers = {int(x) for x in spec["train_layers"].split(",")}
    for name, p in model.named_parameters():
        m = _LAYER_RE.search("." + name)
        in_layers = m is None or int(m.group(1)) in layers
        p.requires_grad_(in_layers and short_name(name) in modules)
    return model


@contextlib.contextmanager
def adapters_stay_put():
    """Under fake tensors, make nn.Module.to() a no-op while PEFT wraps the model.

    PEFT moves each new LoRA module to its base layer's device and dtype with .to(). On a fake
    parameter, .to() must swap_tensors(), and the fresh fake parameters carry a weakref that makes
    the swap fail. The adapters are already on the (fake) cpu device, and PEFT's
    autocast_adapter_dtype upcasts them back to fp32 after the dtype move, so skipping the moves
    gives the same final parameters as a real run (tests/test_measure.py checks a LoRA plan).
    """
    original = torch.nn.Module.to
    torch.nn.Module.to = lambda self, *a, **k: self
    try:
        yield
    finally:
        torch.nn.Module.to = original


def apply_method(model, spec):
    if spec["method"] == "full":
        return model
    if spec["method"] == "lora":
        return apply_lora(model, spec)
    if spec["method"] == "freeze":
        return apply_freeze(model, spec)
    raise ValueError(f"unknown method {spec['method']!r}")

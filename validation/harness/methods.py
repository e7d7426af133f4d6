"""Training methods: full, LoRA through real PEFT, and freeze (requires_grad on chosen tensors).

Module names use trainmem's short vocabulary (q,k,v,o,gate,up,down,norm,embed,lm_head;
experts, router and shared_experts for MoE) so a row's config can be replayed by
`trainmem estimate` unchanged; MODULES_OF_FAMILY maps them to each family's module names.
"""
import contextlib
import re

import torch

from peft import LoraConfig, get_peft_model

# trainmem's short names of the linear layers -> the module-name suffixes that implement them in
# each family (transformers 5.24 module names). A fused module answers to every name it fuses, as
# trainmem's targets_group does (naming any of q, k, v reaches a fused qkv; gate or up reaches
# gate_up_proj). Families not listed use the Llama names.
_LLAMA = {"q": ("q_proj",), "k": ("k_proj",), "v": ("v_proj",), "o": ("o_proj",),
          "gate": ("gate_proj",), "up": ("up_proj",), "down": ("down_proj",)}
_QKV = ("q", "k", "v")
_NEOX = dict({s: ("query_key_value",) for s in _QKV}, o=("attention.dense", "self_attention.dense"),
             up=("dense_h_to_4h",), down=("dense_4h_to_h",))
_MLA = dict(_LLAMA, q=("q_proj", "q_a_proj", "q_b_proj"), k=("kv_a_proj_with_mqa", "kv_b_proj"),
            v=("kv_a_proj_with_mqa", "kv_b_proj"))
MODULES_OF_FAMILY = {
    "phi3": dict(_LLAMA, **{s: ("qkv_proj",) for s in _QKV}, gate=("gate_up_proj",), up=("gate_up_proj",)),
    "gpt2": dict({s: ("attn.c_attn",) for s in _QKV}, o=("attn.c_proj",), up=("mlp.c_fc",),
                 down=("mlp.c_proj",)),
    "phi": dict(_LLAMA, o=("self_attn.dense",), up=("mlp.fc1",), down=("mlp.fc2",)),
    "gpt_neox": _NEOX,
    "falcon": _NEOX,
    "starcoder2": dict(_LLAMA, up=("mlp.c_fc",), down=("mlp.c_proj",)),
    "deepseek_v2": _MLA,
    "deepseek_v3": _MLA,
}
LINEAR_OF_SHORT = {k: v[0] for k, v in _LLAMA.items()}  # the Llama names, for readers of old rows
_LAYER_RE = re.compile(r"\.(?:layers|h)\.(\d+)\.")


def modules_of(model_type):
    return MODULES_OF_FAMILY.get(model_type, _LLAMA)


def _ends_with_module(path, suffix):
    return path == suffix or path.endswith("." + suffix)


def short_names(param_name, model_type="llama", module_class=""):
    """trainmem short names that reach a parameter (a set; empty when none does).

    `module_class` is the class name of the module owning the parameter: every *Norm module is
    `norm` (RMSNorm, LayerNorm, q/k norms, MLA's latent norms), every embedding but a learned
    position table is `embed`.
    """
    path = param_name.rsplit(".", 1)[0]
    if path.startswith("lm_head") or ".lm_head" in path:
        return {"lm_head"}
    if "Norm" in module_class or param_name.endswith("norm.weight") or param_name.endswith("norm.bias"):
        return {"norm"}
    if "Embedding" in module_class or "embed_tokens" in param_name:
        return set() if any(p in path for p in ("wpe", "embed_positions")) else {"embed"}
    if ".experts" in path and ".shared_expert" not in path:
        return {"experts"}
    if _ends_with_module(path, "mlp.gate") or ".mlp.gate." in param_name:  # MoE router (+ bias)
        return {"router"}
    if _ends_with_module(path, "shared_expert_gate"):
        return {"router", "shared_experts"}
    out = {short for short, suffixes in modules_of(model_type).items()
           if any(_ends_with_module(path, s) for s in suffixes)}
    if out and ".shared_expert" in path:
        out.add("shared_experts")
    return out


def short_name(param_name, model_type="llama"):
    """The single short name of a parameter, or None (ambiguous for fused modules)."""
    names = short_names(param_name, model_type)
    return next(iter(names)) if len(names) == 1 else None


def lora_target_regex(targets, model_type):
    """A PEFT target_modules regex (full match on module names) for trainmem short names.

    A name the family has no module for reaches nothing (GPT-2 has no `gate`), as in trainmem.
    """
    suffixes = sorted({s for t in targets.split(",") for s in modules_of(model_type).get(t, ())})
    return r"^(.*\.)?(" + "|".join(re.escape(s) for s in suffixes) + r")$"


def apply_lora(model, spec):
    """Wrap with PEFT; adapters follow PEFT's default and are upcast to fp32 on a bf16 base."""
    cfg = LoraConfig(r=spec["lora_rank"], lora_alpha=spec["lora_alpha"],
                     lora_dropout=spec["lora_dropout"], use_dora=bool(spec.get("dora")),
                     target_modules=lora_target_regex(spec["lora_targets"], model.config.model_type),
                     bias="none", task_type="CAUSAL_LM")
    return get_peft_model(model, cfg)


def apply_freeze(model, spec):
    """Train only `train_modules` in `train_layers`; non-layer tensors follow train_modules."""
    modules = set(spec["train_modules"].split(","))
    layers = {int(x) for x in spec["train_layers"].split(",")}
    owner = {f"{mname}.{pname}" if mname else pname: type(mod).__name__
             for mname, mod in model.named_modules() for pname, _ in mod.named_parameters(recurse=False)}
    model_type = model.config.model_type
    for name, p in model.named_parameters():
        m = _LAYER_RE.search("." + name)
        in_layers = m is None or int(m.group(1)) in layers
        p.requires_grad_(in_layers and bool(short_names(name, model_type, owner.get(name, "")) & modules))
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

"""trainmem: will this training run fit in my memory, and if not, what must I change?

The Python face of the trainmem C++ engine. Every figure comes from the same library as the
``trainmem`` command line; plans cross the boundary as the library's plan JSON.

    >>> import trainmem
    >>> r = trainmem.estimate("Qwen/Qwen3-8B", method="lora", batch=4, seq=2048, gpu="rtx-4090")
    >>> r.peak_bytes, r.fit.fits

The configuration objects a trainer takes price the same way, as ``SFTTrainer`` takes them:

    >>> r = trainmem.estimate("Qwen/Qwen3-8B", args=SFTConfig(...), peft_config=LoraConfig(...),
    ...                       gpu="rtx-4090")
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _native
from ._native import Model, TrainmemError
from ._result import (Advice, AdviceOption, Device, DistributedEstimate, Estimate, Fit, Item,
                      ModelInfo, Solution)

__version__ = _native.__version__
__all__ = [
    "Advice", "AdviceOption", "Device", "DistributedEstimate", "Estimate", "Fit", "Item", "Model",
    "ModelInfo",
    "Solution", "TrainmemError", "advise", "devices", "estimate", "from_hf_config", "from_model",
    "load", "models", "plan", "solve",
]

# The settings that set a field of a nested plan group (lora={"rank": 8} is lora_rank=8).
_FLAT = {
    ("lora", "rank"): "lora_rank",
    ("lora", "alpha"): "lora_alpha",
    ("lora", "dropout"): "lora_dropout",
    ("lora", "targets"): "lora_targets",
    ("lora", "dora"): "dora",
    ("lora", "modules_to_save"): "modules_to_save",
    ("quant", "kind"): "quant",
    ("quant", "double_quant"): "double_quant",
    ("quant", "prepare_kbit"): "prepare_kbit",
    ("freeze", "train_modules"): "train_modules",
    ("freeze", "train_layers"): "train_layers",
}

ModelRef = Union[str, Model]

# The configuration objects of the Hugging Face stack a trainer takes (SFTTrainer(args=...,
# peft_config=...), from_pretrained(quantization_config=...)), read as `trainmem estimate --from`
# reads a file of them.
_CONFIG_ARGUMENTS = ("args", "peft_config", "quantization_config")


def _config_text(value: Any) -> Tuple[str, str]:
    """A config object, dict, or path to a JSON/YAML file, as (text, name) for the importers. An
    object's to_dict() holds every field, defaults included, as the trainer will see it; a field
    that is None or empty is unset."""
    if isinstance(value, (str, os.PathLike)):
        try:
            with open(value, encoding="utf-8") as f:
                return f.read(), str(value)
        except OSError as e:
            raise TrainmemError(f"{value}: cannot read the file ({e.strerror})") from None
    name = type(value).__name__
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}: expected a config object with to_dict(), a dict or a file path")
    fields = {k: v for k, v in value.items() if v is not None and v != [] and v != "" and v != {}}
    return json.dumps(fields, default=_json_value), name


def _json_value(value: Any) -> Any:
    """What json.dumps cannot write: sets (LoraConfig.target_modules) as sorted lists, the rest
    (enums, dtypes) as text."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def _text(name: str, value: Any) -> Optional[str]:
    """A device name or a size as the native call takes it: gpu=4090 is the name "4090", memory=24
    is "24" (which the library refuses for want of a unit, naming both spellings)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise TrainmemError(f"{name}: expected text such as \"rtx-4090\" or \"24GB\", "
                        f"got {type(value).__name__}")


def _whole(name: str, value: Any) -> Optional[int]:
    """A positive whole number given as an int or its text ("4")."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise TrainmemError(f"{name}: expected a positive whole number, got {value!r}")


def _imported(configs: Mapping[str, Any]) -> Tuple[List[Tuple[str, str, str]], List[str]]:
    """The settings the config arguments give, in order, and one report line per argument."""
    settings: List[Tuple[str, str, str]] = []
    reports: List[str] = []
    for arg in _CONFIG_ARGUMENTS:
        value = configs.get(arg)
        if value is None:
            continue
        text, name = _config_text(value)
        patch, fmt, used, ignored, _model = _native.import_settings(text, f"{arg}={name}")
        settings += patch
        reasons = [i for i in ignored if "(" in i]
        rest = len(ignored) - len(reasons)
        reports.append(
            f"{arg}={name} read as {fmt}. Used: {'; '.join(used) or 'none'}."
            + (f" Ignored: {'; '.join(reasons)}." if reasons else "")
            + (f" {rest} other field(s) do not change memory." if rest else ""))
    return settings, reports


def load(model: ModelRef) -> Model:
    """A model by preset name, Hugging Face id (local cache, then presets), config.json path or
    folder of safetensors files. Nothing is downloaded."""
    return model if isinstance(model, Model) else _native.load(str(model))


def from_hf_config(config: Any, name: Optional[str] = None) -> Model:
    """A model from a transformers ``PretrainedConfig`` (or a config dict or JSON string)."""
    if hasattr(config, "to_json_string"):
        text = config.to_json_string(use_diff=False)
    elif isinstance(config, Mapping):
        text = json.dumps(dict(config))
    elif isinstance(config, str):
        text = config
    else:
        raise TypeError("from_hf_config takes a PretrainedConfig, a dict or a JSON string")
    if name is None:
        name = getattr(config, "_name_or_path", "") or (
            config.get("_name_or_path", "") if isinstance(config, Mapping) else "") or "config"
    return _native.from_config(text, name)


# torch dtype -> safetensors spelling; the engine maps these to storage costs.
_TORCH_DTYPES = {
    "torch.float64": "F64", "torch.float32": "F32", "torch.float16": "F16",
    "torch.bfloat16": "BF16", "torch.int64": "I64", "torch.int32": "I32", "torch.int16": "I16",
    "torch.int8": "I8", "torch.uint8": "U8", "torch.bool": "BOOL",
    "torch.float8_e4m3fn": "F8_E4M3", "torch.float8_e5m2": "F8_E5M2",
}


def from_model(module: Any, name: Optional[str] = None) -> Model:
    """The exact parameter inventory of a live transformers ``nn.Module`` (the meta device works:
    only names, shapes and dtypes are read, never weights). Its ``config`` gives the
    architecture; tied weights count once, as ``named_parameters()`` lists them."""
    config = getattr(module, "config", None)
    if config is None or not hasattr(config, "to_json_string"):
        raise TypeError("from_model needs a transformers model with a .config")
    tensors = []
    for pname, p in module.named_parameters():
        dtype = _TORCH_DTYPES.get(str(p.dtype))
        if dtype is None:
            raise TrainmemError(f"{pname}: dtype {p.dtype} is not one trainmem prices")
        tensors.append((pname, dtype, [int(d) for d in p.shape]))
    name = name or getattr(config, "_name_or_path", "") or type(module).__name__
    return _native.from_tensors(config.to_json_string(use_diff=False), tensors, name)


def plan(**fields: Any) -> dict:
    """The whole plan, defaults filled and checked, as the library reads it. Fields are the
    command line's settings in snake_case (method, batch, seq, lora_rank, lora_targets,
    optimizer="paged_adamw_8bit", ...; ``trainmem estimate --help`` lists them), with the same
    defaults (the HF Trainer's) and aliases; ``plan=`` takes a whole plan this function returned.
    ``args``, ``peft_config`` and ``quantization_config`` take the objects a trainer takes
    (TrainingArguments or TRL's SFTConfig, PEFT's LoraConfig, BitsAndBytesConfig), a dict of
    their fields or a JSON/YAML file, read as ``trainmem estimate --from`` reads them; settings
    given as keywords override them. Every other function takes them too.
    ``layout`` spreads the plan over GPUs, in the plan JSON's layout names (docs/formats.md):
    ``layout={"engine": "deepspeed", "zero_stage": 3, "gpus_per_node": 8}``; ``estimate`` then
    prices it per rank, as ``trainmem estimate --gpus 8 --zero 3`` does.
    Raises TrainmemError on an unknown setting, a wrong value or one out of range."""
    return json.loads(_plan_json(fields))


def _setting_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _plan_json(fields: Mapping[str, Any]) -> str:
    return _plan_and_reports(fields)[0]


def _plan_and_reports(fields: Mapping[str, Any]) -> Tuple[str, List[str], bool]:
    """The plan JSON of settings and config objects (config objects first, so a keyword argument
    overrides what they say), what each config object gave, and whether either set the sequence
    length (then a dataset's records truncate at it, as TRL's max_length truncates them)."""
    fields = dict(fields)
    configs = {k: fields.pop(k, None) for k in _CONFIG_ARGUMENTS}
    layout = fields.pop("layout", None)
    plan_json, reports, seq_given = _settings_plan(fields, configs)
    if layout is None:
        return plan_json, reports, seq_given
    if not isinstance(layout, Mapping):
        raise TrainmemError("layout: must be a dict of the plan's layout fields, such as "
                            '{"engine": "fsdp", "fsdp": "full", "gpus_per_node": 8}')
    whole = json.loads(plan_json)
    whole["layout"] = {**whole.get("layout", {}), **layout}
    return _native.check_plan(json.dumps(whole)), reports, seq_given


def _settings_plan(fields: Dict[str, Any],
                   configs: Mapping[str, Any]) -> Tuple[str, List[str], bool]:
    whole = fields.pop("plan", None)
    if whole is not None:
        if any(v is not None for v in fields.values()) or any(configs.values()):
            raise TrainmemError("give either plan= (a whole plan from trainmem.plan()) or "
                                "settings, not both")
        return _native.check_plan(json.dumps(whole)), [], True
    imported, reports = _imported(configs)
    # As the command line: the environment's PYTORCH_ALLOC_CONF (else PYTORCH_CUDA_ALLOC_CONF, the
    # older name PyTorch reads second) sets the allocator model's configuration unless the call
    # gives alloc_conf.
    if fields.get("alloc_conf") is None:
        for name in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
            if os.environ.get(name) is not None:
                fields["alloc_conf"] = os.environ[name]
                break
    seq_given = any(key == "seq" for key, _, _ in imported) or any(
        fields.get(k) is not None for k in ("seq", "max_length", "max_seq_length"))
    settings = []
    for key, value in fields.items():
        if value is None:
            continue
        if isinstance(value, Mapping):  # a nested group given whole: lora={"rank": 8}
            for sub, v in value.items():
                settings.append((_FLAT.get((key, sub), f"{key}_{sub}"), _setting_text(v)))
        else:
            settings.append((key, _setting_text(value)))
    # The plan's own notes (the defaults it took: the LoRA recipe's bf16 base, a framework
    # profile's) follow what the config objects gave, as the command line's report has them.
    plan_json, plan_notes = _native.plan_from_settings(settings, imported)
    return plan_json, reports + plan_notes, seq_given


def estimate(model: ModelRef, *, gpu: Optional[str] = None, memory: Optional[str] = None,
             reserve: Optional[str] = None, dataset: Optional[str] = None,
             **plan_fields: Any) -> Estimate:
    """Prices one training step: ``estimate("qwen3-8b", method="lora", batch=4, seq=2048,
    gpu="rtx-4090")``. Plan fields are those of ``trainmem.plan()``; ``memory`` is a size with
    a unit ("24GB", "24GiB"). ``dataset`` (a .jsonl, .json or .txt file, as
    ``trainmem estimate --dataset``) also prices the plan at its records' p50, p95 and longest
    length, truncated at ``seq`` when given: ``Estimate.dataset`` holds that report. Tokens are
    counted exactly by a tokenizer.json beside the model's config, else estimated."""
    m = load(model)
    gpu, memory, reserve = _text("gpu", gpu), _text("memory", memory), _text("reserve", reserve)
    plan_json, notes, seq_given = _plan_and_reports(plan_fields)
    doc = json.loads(_native.estimate(m, plan_json, gpu, memory, reserve,
                                      None if dataset is None else str(dataset), seq_given, notes))
    # A plan with a layout across GPUs (plan=trainmem.plan(..., layout={...}) or layout=...) is
    # priced per rank, as `trainmem estimate --gpus N` prices it.
    kind = DistributedEstimate if doc.get("schema") == "trainmem.distributed/1" else Estimate
    return kind(doc, _model=m, _plan_json=plan_json, _gpu=gpu, _memory=memory, _reserve=reserve,
                _dataset=None if dataset is None else str(dataset), _seq_given=seq_given,
                _notes=notes)


def solve(model: ModelRef, target: str, *, gpu: Optional[str] = None,
          memory: Optional[str] = None, step: Optional[int] = None,
          **plan_fields: Any) -> Solution:
    """``target``: "max-batch", "max-seq" (need gpu or memory), "smallest-gpu" or
    "smallest-tier". ``step``: the answer is a multiple of it; by default 64 for max-seq and 1
    otherwise, as ``trainmem solve``."""
    m = load(model)
    doc = json.loads(_native.solve(m, _plan_json(plan_fields), target, _text("gpu", gpu),
                                   _text("memory", memory), _whole("step", step)))
    return Solution(doc)


def advise(model: ModelRef, *, gpu: Optional[str] = None, memory: Optional[str] = None,
           dataset: Optional[str] = None, **plan_fields: Any) -> Advice:
    """The changes that make the plan fit the device, cheapest first, each priced. With
    ``dataset`` (as ``trainmem advise --dataset``) the plan is advised at the longest record
    (truncated at ``seq`` when given), truncating at the p95 is an option when the tail is long,
    and ``Advice.dataset`` holds the dataset report."""
    m = load(model)
    plan_json, _reports, seq_given = _plan_and_reports(plan_fields)
    return Advice(json.loads(_native.advise(m, plan_json, _text("gpu", gpu),
                                            _text("memory", memory),
                                            None if dataset is None else str(dataset), seq_given)))


def devices() -> list:
    """The device database: GPUs, Apple machines and the seeds' tiers."""
    return [Device.from_dict(d) for d in json.loads(_native.devices())["devices"]]


def models() -> list:
    """The built-in presets with their exact and published parameter counts."""
    return [ModelInfo.from_dict(d) for d in json.loads(_native.models())["models"]]

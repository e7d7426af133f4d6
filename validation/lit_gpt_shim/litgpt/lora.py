"""litgpt.lora's names over lit_gpt.lora (8641822): the LoRA switches were r, alpha, dropout and
to_* there."""
from lit_gpt.lora import GPT, mark_only_lora_as_trainable  # noqa: F401
from lit_gpt.lora import Config as _Config

from litgpt import translate

LORA = {"lora_r": "r", "lora_alpha": "alpha", "lora_dropout": "dropout", "lora_query": "to_query",
        "lora_key": "to_key", "lora_value": "to_value", "lora_projection": "to_projection",
        "lora_mlp": "to_mlp", "lora_head": "to_head"}


def Config(**kw):
    kw = translate(kw)
    for new, old in LORA.items():
        if new in kw:
            kw[old] = kw.pop(new)
    return _Config(**kw)

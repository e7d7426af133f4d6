"""litgpt 0.4.13's names over lit-gpt's `lit_gpt` package of October 2023 (commit 8641822, the
release the 2023 resource tables were measured with), so that validation/litgpt_cpu.py can run
that code unchanged: `PYTHONPATH=validation/lit_gpt_shim:<dir holding lit_gpt>`. Only what the
probe uses is mapped; a field lit_gpt did not have raises instead of being dropped."""
from lit_gpt import GPT  # noqa: F401
from lit_gpt.config import Config as _Config

# Read by litgpt_cpu.py's provenance in place of the installed litgpt's version.
SHIM_OF = "lit-gpt@8641822 (lit_gpt package)"

# lit_gpt 8641822 config.py spells these with a leading underscore.
RENAMES = {"norm_class_name": "_norm_class", "mlp_class_name": "_mlp_class"}


def translate(kw):
    kw = dict(kw)
    for new, old in RENAMES.items():
        if new in kw:
            kw[old] = kw.pop(new)
    # lit_gpt derives the head size as n_embd // n_head.
    head_size = kw.pop("head_size", None)
    if head_size is not None and head_size != kw["n_embd"] // kw["n_head"]:
        raise ValueError(f"lit_gpt 8641822 has no head_size field; {head_size} != n_embd // n_head")
    if kw.pop("scale_embeddings", False):
        raise ValueError("lit_gpt 8641822 has no scale_embeddings (Gemma came in 2024)")
    return kw


def Config(**kw):
    return _Config(**translate(kw))

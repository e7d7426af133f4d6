"""Model configs as data, written to validation/configs/NAME.json so every row names a file.

Tiny configs keep the real architectures (GQA, q/k norms, Qwen2 q/k/v biases, MoE routing) but
shrink width, depth and vocabulary so a real CPU step takes seconds. Full-size configs are copied
from shared/models.json and only ever run under FakeTensorMode.
"""
import json
import os

from .family_configs import FAMILY_TINY

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_DIR = os.path.join("validation", "configs")
MODELS_JSON = os.environ.get("TRAINMEM_MODELS_JSON", os.path.join(os.path.dirname(REPO_ROOT), "shared", "models.json"))

_COMMON_TINY = {
    "hidden_act": "silu",
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 8192,  # bf16 matmuls run at ~1 GFLOP/s on this CPU; logits still matter
    "attention_dropout": 0.0,
}

TINY = {
    "qwen3-tiny": dict(_COMMON_TINY, architectures=["Qwen3ForCausalLM"], model_type="qwen3",
                       hidden_size=128, intermediate_size=384, num_hidden_layers=4,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                       attention_bias=False),
    "llama-tiny": dict(_COMMON_TINY, architectures=["LlamaForCausalLM"], model_type="llama",
                       hidden_size=128, intermediate_size=352, num_hidden_layers=4,
                       num_attention_heads=4, num_key_value_heads=2, attention_bias=False,
                       mlp_bias=False, rope_theta=500000.0, rms_norm_eps=1e-5),
    "qwen2-tiny": dict(_COMMON_TINY, architectures=["Qwen2ForCausalLM"], model_type="qwen2",
                       hidden_size=128, intermediate_size=352, num_hidden_layers=4,
                       num_attention_heads=4, num_key_value_heads=2, use_sliding_window=False,
                       max_window_layers=4),
    "qwen3moe-tiny": dict(_COMMON_TINY, architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe",
                          hidden_size=128, intermediate_size=384, moe_intermediate_size=64,
                          num_experts=8, num_experts_per_tok=2, norm_topk_prob=True,
                          decoder_sparse_step=1, mlp_only_layers=[], num_hidden_layers=4,
                          num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                          attention_bias=False, router_aux_loss_coef=0.001),
}

# name used in ids and file names -> key in shared/models.json
FULL = {
    "qwen3-0.6b": "Qwen3-0.6B",
    "qwen3-8b": "Qwen3-8B",
    "llama-3.1-8b": "Llama-3.1-8B",
    "qwen2.5-1.5b": "Qwen2.5-1.5B",
    "qwen3-30b-a3b": "Qwen3-30B-A3B",
    "mistral-7b": "Mistral-7B-v0.1",
    "mixtral-8x7b": "Mixtral-8x7B-v0.1",
    "gemma2-9b": "Gemma-2-9B",
    "phi3-mini": "Phi-3-mini-4k-instruct",
    "gpt2-124m": "GPT-2 (124M)",
    "deepseek-v3": "DeepSeek-V3",
}


def load(name):
    """Return the HF config dict of a named model (tiny from TINY, full size from models.json)."""
    if name in TINY:
        return dict(TINY[name])
    if name in FAMILY_TINY:
        return dict(FAMILY_TINY[name])
    path = os.path.join(REPO_ROOT, CONFIG_DIR, name + ".json")
    if name in FULL and os.path.exists(MODELS_JSON):
        with open(MODELS_JSON) as f:
            cfg = dict(json.load(f)[FULL[name]]["config"])
        # The harness builds plain bf16 weights (from_config ignores a checkpoint's fp8
        # quantization_config); drop it so trainmem prices the same model that was measured.
        cfg.pop("quantization_config", None)
        return cfg
    published = os.path.join(REPO_ROOT, CONFIG_DIR, "published", name + ".json")
    if not os.path.exists(path) and os.path.exists(published):
        path = published  # the published config.json fields (validation/configs/published/)
    if os.path.exists(path):  # committed copy: the harness still runs without shared/
        with open(path) as f:
            return json.load(f)
    raise KeyError(f"unknown model config {name!r}")


def write(name):
    """Write the config to validation/configs/NAME.json and return its repo-relative path; a
    published config.json (validation/configs/published/, committed as published) is not copied:
    its own path is returned."""
    published = os.path.join(CONFIG_DIR, "published", name + ".json")
    if name not in TINY and name not in FAMILY_TINY and name not in FULL and \
            os.path.exists(os.path.join(REPO_ROOT, published)):
        return published
    rel = os.path.join(CONFIG_DIR, name + ".json")
    cfg = load(name)
    os.makedirs(os.path.join(REPO_ROOT, CONFIG_DIR), exist_ok=True)
    with open(os.path.join(REPO_ROOT, rel), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    return rel

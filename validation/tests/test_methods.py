"""Freeze and LoRA select the parameters the trainmem vocabulary names."""
from harness import build, configs, methods


def _model():
    return build.build_model(configs.load("qwen3-tiny"), "bf16", "sdpa")


def test_short_names():
    assert methods.short_name("model.layers.0.self_attn.q_proj.weight") == "q"
    assert methods.short_name("model.layers.3.mlp.down_proj.weight") == "down"
    assert methods.short_name("model.layers.1.self_attn.k_norm.weight") == "norm"
    assert methods.short_name("model.embed_tokens.weight") == "embed"
    assert methods.short_name("lm_head.weight") == "lm_head"
    assert methods.short_name("model.layers.0.mlp.experts.gate_up_proj") == "experts"
    assert methods.short_name("model.layers.0.mlp.gate.weight") == "router"


def test_freeze_trains_only_chosen_layers_and_modules():
    model = methods.apply_freeze(_model(), {"train_modules": "q,v", "train_layers": "3"})
    trainable = sorted(n for n, p in model.named_parameters() if p.requires_grad)
    assert trainable == ["model.layers.3.self_attn.q_proj.weight", "model.layers.3.self_attn.v_proj.weight"]


def test_lora_adds_fp32_adapters_on_all_linears():
    spec = {"lora_rank": 8, "lora_alpha": 16, "lora_dropout": 0.0, "lora_targets": "q,k,v,o,gate,up,down"}
    model = methods.apply_lora(_model(), spec)
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert len(trainable) == 4 * 7 * 2  # layers x targets x (A, B)
    assert all(p.dtype.is_floating_point and p.element_size() == 4 for p in trainable)

"""The family matrix (issue 15): module naming per family, row ids, and gradient accumulation."""
import json
import os
import re

import pytest

import matrix
from conftest import VALIDATION
from harness import build, configs, family_configs, methods, record, run

ISSUE_FAMILIES = {"llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "mixtral", "gemma2", "gemma3_text",
                  "phi3", "gpt2", "deepseek_v3", "phi", "gpt_neox", "olmo2", "gemma", "granite",
                  "starcoder2", "falcon", "cohere", "cohere2", "gpt_oss", "qwen2_moe", "deepseek_v2"}


def _lora_modules(model_type, targets):
    """Module names the PEFT regex picks among typical names of that family."""
    rx = re.compile(methods.lora_target_regex(targets, model_type))
    names = {
        "gpt2": ["transformer.h.0.attn.c_attn", "transformer.h.0.attn.c_proj",
                 "transformer.h.0.mlp.c_fc", "transformer.h.0.mlp.c_proj"],
        "phi3": ["model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj",
                 "model.layers.0.mlp.gate_up_proj", "model.layers.0.mlp.down_proj"],
        "falcon": ["transformer.h.0.self_attention.query_key_value", "transformer.h.0.self_attention.dense",
                   "transformer.h.0.mlp.dense_h_to_4h", "transformer.h.0.mlp.dense_4h_to_h"],
    }[model_type]
    return [n.split(".0.")[1] for n in names if rx.fullmatch(n)]


def test_lora_targets_reach_fused_and_conv1d_modules():
    assert _lora_modules("phi3", "q,v") == ["self_attn.qkv_proj"]
    assert _lora_modules("phi3", "up") == ["mlp.gate_up_proj"]
    # GPT-2 has two c_proj modules: "o" is the attention one, "down" the MLP one
    assert _lora_modules("gpt2", "o") == ["attn.c_proj"]
    assert _lora_modules("gpt2", "down") == ["mlp.c_proj"]
    assert _lora_modules("gpt2", "q,k,v,o,up,down") == ["attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"]
    assert _lora_modules("falcon", "k") == ["self_attention.query_key_value"]


def test_short_names_follow_trainmem_roles():
    assert methods.short_names("model.layers.0.self_attn.qkv_proj.weight", "phi3") == {"q", "k", "v"}
    assert methods.short_names("transformer.wpe.weight", "gpt2", "Embedding") == set()
    assert methods.short_names("transformer.wte.weight", "gpt2", "Embedding") == {"embed"}
    assert methods.short_names("transformer.h.1.ln_2.bias", "gpt2", "LayerNorm") == {"norm"}
    assert methods.short_names("model.layers.1.mlp.shared_experts.up_proj.weight", "deepseek_v3") == \
        {"up", "shared_experts"}
    assert methods.short_names("model.layers.1.mlp.gate.e_score_correction_bias", "deepseek_v3") == {"router"}
    assert methods.short_names("model.layers.1.mlp.shared_expert_gate.weight", "qwen2_moe") == \
        {"router", "shared_experts"}
    assert methods.short_names("model.layers.0.self_attn.kv_b_proj.weight", "deepseek_v2") == {"k", "v"}


def test_freeze_last_layers_of_gpt2_trains_layers_2_3_and_final_norm():
    model = build.build_model(configs.load("gpt2-tiny"), "bf16", "sdpa")
    methods.apply_freeze(model, matrix._freeze_last2(moe=False))
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert all(".h.2." in n or ".h.3." in n or n.startswith("transformer.ln_f.") for n in trainable)
    assert "transformer.h.3.attn.c_attn.bias" in trainable and "transformer.ln_f.bias" in trainable
    assert len(trainable) == 2 * 12 + 2  # 12 tensors per GPT-2 block, ln_f weight and bias


def test_ids_of_the_committed_matrix_are_unchanged():
    with open(os.path.join(VALIDATION, "data", "measurements.jsonl")) as f:
        committed = {json.loads(line)["id"] for line in f}
    assert {record.row_id(s) for s in matrix.full()} == committed


def test_new_id_parts():
    spec = dict(matrix._row("llama-tiny", matrix.lora(targets="q,v"), lora_dropout=0.1), grad_accum=2)
    assert record.row_id(spec) == \
        "llama-tiny_lora-r16-qv-drop0.1_adamw-foreach_bf16_ckpt-none_sdpa_b2_s128_ga2"


def test_families_matrix_covers_every_family_of_the_issue():
    rows = matrix.families()
    ids = [record.row_id(r) for r in rows]
    assert len(ids) == len(set(ids))
    types = {configs.load(r["model"])["model_type"] for r in rows}
    assert types == ISSUE_FAMILIES
    for model, _, _ in matrix.SUPPORTED_FAMILIES:
        mine = [r for r in rows if r["model"] == model]
        assert {r["method"] for r in mine} == {"full", "lora", "freeze"}
        assert {r.get("lora_dropout") for r in mine if r["method"] == "lora"} == {0.0, 0.1}
        assert {r["precision"] for r in mine} == {"bf16", "autocast-bf16"}
        assert {r["checkpointing"] for r in mine} == {"none", "full"}
        assert {r["grad_accum"] for r in mine} == {1, 2}
        assert len({(r["batch"], r["seq"]) for r in mine}) >= 2
    for model, _, _ in matrix.NEW_FAMILIES:
        mine = [r for r in rows if r["model"] == model]
        assert {r["method"] for r in mine} == {"full", "lora"} and len({r["seq"] for r in mine}) == 2


def test_every_family_config_builds_with_its_model_type():
    for name, cfg in family_configs.FAMILY_TINY.items():
        assert build.hf_config(cfg).model_type == cfg["model_type"], name


def test_grad_accum_keeps_gradients_through_the_next_forward():
    """Micro-batch 2's forward runs with micro-batch 1's gradients live: + one gradient per param."""
    spec = dict(matrix.tiny()[0], optimizer="sgd", optimizer_impl=None)  # no state: grads stand out
    one = run.measure(spec)["measured"]["phase_peaks"]["step1"]
    two = run.measure(dict(spec, grad_accum=2))["measured"]["phase_peaks"]["step1"]
    params = sum(p.numel() * p.element_size()
                 for p in build.build_model(configs.load("qwen3-tiny"), "bf16", "sdpa").parameters())
    # both forwards book under step1/forward; the second one carries bf16 gradients = param bytes
    assert two["forward"] - one["forward"] == pytest.approx(params, abs=64 * 1024)


def test_fake_moe_runs_transformers_grouped_mm_and_matches_real():
    """transformers 5.x's default experts path (grouped_mm) has static shapes: fake == real."""
    spec = dict(matrix._row("qwen3moe-tiny"), batch=1, seq=32)
    real = run.measure(spec)["measured"]
    fake = run.measure(dict(spec, mode="fake"))["measured"]
    assert fake["phase_peaks"] == real["phase_peaks"]
    assert fake["by_category"] == real["by_category"]


def test_lora_names_a_family_lacks_reach_nothing():
    assert _lora_modules("gpt2", matrix.ALL_LINEAR) == ["attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"]
    assert _lora_modules("falcon", matrix.ALL_LINEAR) == [
        "self_attention.query_key_value", "self_attention.dense", "mlp.dense_h_to_4h", "mlp.dense_4h_to_h"]

"""The published rows carry the settings their sources state (validation/published/convert.py)."""
import json
import os

from conftest import VALIDATION


def _rows():
    with open(os.path.join(VALIDATION, "data", "gpu-published.jsonl")) as f:
        return {r["id"]: r for r in map(json.loads, f)}


def test_torchtune_gradient_accumulation_follows_the_source():
    rows = _rows()
    # The April 2024 tutorials ran their configs as they were (64 and 16 micro-batches a step).
    for rid in ("ttn_tut_l2_7b_lora_qv_r8", "ttn_tut_l2_7b_lora_all_r64"):
        assert rows[rid]["config"]["grad_accum"] == 64
        assert any("gradient_accumulation_steps" in n for n in rows[rid]["conversion_notes"])
    assert rows["ttn_tut_l2_7b_qlora"]["config"]["grad_accum"] == 16
    # The README's Llama-3.1 table says "without gradient accumulation"; PR #527's config sets 1.
    for rid in ("ttn_l31_8b_lora_4090", "ttn_l31_8b_qlora_4090", "ttn_pr527_l2_7b_full_paged"):
        assert rows[rid]["config"]["grad_accum"] == 1


def test_peft_rows_take_the_truncation_length_their_source_sets():
    rows = _rows()
    peft = [r for rid, r in rows.items() if rid.startswith("peft_mmqa")]
    assert len(peft) == 6
    # PEFT's MetaMathQA run truncates every sample at max_seq_length (768); the longest batch is
    # not logged, so each row is priced at that bound and says so.
    for r in peft:
        assert r["config"]["seq"] == 768
        assert any(n.startswith("seq 768") for n in r["conversion_notes"])
    # Rows whose source states the length keep it.
    assert rows["lg23_phi15_qlora_mb1"]["config"]["seq"] == 1044

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


def test_litgpt_2023_rows_replay_the_longest_sample_first():
    rows = _rows()
    lg23 = [r for rid, r in rows.items() if rid.startswith("lg23_")]
    assert len(lg23) == 16
    # lit-gpt 8641822 ran the longest sample at iteration 0, then random ones: each row's run is
    # its longest length, then Alpaca's published median (110 tokens).
    for r in lg23:
        assert r["config"]["step_lengths"] == [r["config"]["seq"], 110], r["id"]
        assert any(n.startswith("step_lengths: lit-gpt runs the longest sample")
                   for n in r["conversion_notes"]), r["id"]
    # No other source says what its run fed.
    assert not [rid for rid, r in rows.items()
                if not rid.startswith("lg23_") and "step_lengths" in r["config"]]


def test_litgpt_fsdp_rows_run_as_the_source_states():
    rows = _rows()
    # lit-gpt 8641822: Fabric's FSDPStrategy (FSDP1) on 2 GPUs, a unit and a checkpoint per Block,
    # batch_size 128 accumulated over micro-batches.
    for rid, micro in (("lg23_llama2_7b_lora_fsdp2_mb1", 1), ("lg23_llama2_7b_lora_fsdp2_mb4", 4)):
        c = rows[rid]["config"]
        assert c["layout"] == {"engine": "fsdp", "fsdp": "full", "fsdp_version": 1, "gpus": 2}
        assert c["checkpointing"] == "full"
        assert c["grad_accum"] == 128 // micro


def test_a_second_figure_keeps_its_own_published_value():
    rows = _rows()
    reserved = rows["ttn_pr527_l2_7b_full_paged"]["measured"]
    allocated = rows["ttn_pr527_l2_7b_full_paged_allocated"]["measured"]
    # PR #527 quotes both figures to the byte; the row's metric text rounds allocated to 13.99 GB.
    assert reserved["value_as_published"] == "15.974006784 GB"
    assert reserved["peak_bytes"] == 15_974_006_784
    assert allocated["value_as_published"] == "13.993540096 GB"
    assert allocated["peak_bytes"] == 13_993_540_096


def test_full_precision_takes_only_a_quote_of_the_same_figure():
    import sys
    sys.path.insert(0, os.path.join(VALIDATION, "published"))
    from convert import full_precision
    quote = "allocation: 13.993540096GB, reserved: 15.974006784GB"
    assert full_precision("13.99", quote) == "13.993540096"
    assert full_precision("15.97", quote) == "15.974006784"
    assert full_precision("14.00", quote) == "14.00"  # no quote rounds to it
    assert full_precision("13.99", "") == "13.99"

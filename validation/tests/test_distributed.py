"""Multi-rank rows (validation/distributed.py): the merge of the ranks and the committed data."""
import json
import os

import pytest

import distributed
from conftest import VALIDATION
from harness import dist_record, dist_wrap, record


def _block(rank, peak):
    return {"peak_bytes": peak, "peak_phase": "backward", "peak_step": 2,
            "by_category": {"parameters": peak, "gradients": 0, "optimizer": 0, "activations": 0,
                            "other": 0},
            "phase_peaks": {"step1": {"loaded": peak}, "step2": {"backward": peak}},
            "tracker": "memtracker", "device": "cpu", "rank": rank}


def test_merge_keeps_the_most_loaded_rank_and_every_peak():
    spec = distributed._spec("qwen3-tiny", "fsdp2-full", 4)
    row = dist_record.merge(spec, "validation/configs/qwen3-tiny.json",
                            [_block(0, 100), _block(1, 130), _block(2, 120), _block(3, 130)],
                            "python validation/distributed.py", "torchrun ...")
    m = row["measured"]
    assert m["peak_bytes"] == 130 and m["peak_rank"] == 1  # the first of the largest
    assert m["per_rank_peak_bytes"] == [100, 130, 120, 130]
    assert row["config"]["layout"] == {"engine": "fsdp", "fsdp": "full", "fsdp_version": 2,
                                       "gpus": 4, "nodes": 1}
    assert row["id"].endswith("_fsdp2-full_w4")


def test_merge_refuses_a_missing_rank():
    spec = distributed._spec("qwen3-tiny", "ddp", 2)
    with pytest.raises(AssertionError):
        dist_record.merge(spec, "m.json", [_block(0, 1)], "c", "t")


def test_every_matrix_row_has_a_layout_and_a_unique_id():
    specs = distributed.dist_matrix() + distributed.zero_matrix()
    ids = [dist_record.row_id(s) for s in specs]
    assert len(ids) == len(set(ids))
    assert all(s["engine_tag"] in dist_wrap.LAYOUTS for s in specs)
    # FSDP1 cannot flatten PEFT's fp32 adapters with the bf16 base: no such row.
    assert not any(s["method"] == "lora" and s["engine_tag"].startswith("fsdp1") for s in specs)


@pytest.mark.parametrize("name", ["distributed.jsonl", "distributed-zero.jsonl"])
def test_committed_rows_follow_the_schema(name):
    path = os.path.join(VALIDATION, "data", name)
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    assert rows
    for row in rows:
        record.check_row(row)
        m = row["measured"]
        assert m["peak_bytes"] == max(m["per_rank_peak_bytes"])
        assert len(m["per_rank_peak_bytes"]) == row["config"]["layout"]["gpus"]
        assert row["provenance"]["backend"] == "gloo" and "torchrun" in row["provenance"]["launcher"]

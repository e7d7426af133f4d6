"""The JSONL rows follow trainmem.measurement/1 and survive a JSON round trip unchanged."""
import glob
import json
import os

import pytest

import matrix
from harness import record
from conftest import VALIDATION


class _FakeTracker:
    peak_bytes = 300
    peak_at = (2, "backward")
    peak_categories = {"parameters": 100, "gradients": 50, "optimizer": 0, "activations": 120, "other": 30}
    phase_peaks = {(0, "loaded"): 100, (1, "forward"): 250, (1, "backward"): 280, (2, "backward"): 300}


def _row(spec):
    measured = record.measured_block(_FakeTracker(), "memtracker")
    return record.make_row(spec, "validation/configs/qwen3-tiny.json", measured, "python validation/measure.py")


@pytest.mark.parametrize("spec", [matrix.tiny()[0], matrix.subset()[1], matrix.full()[9]],
                         ids=["full", "lora", "freeze"])
def test_row_round_trips(spec):
    row = record.check_row(_row(spec))
    again = json.loads(json.dumps(row))
    assert again == row
    record.check_row(again)


def test_row_shape():
    row = _row(matrix.tiny()[0])
    assert row["id"] == "qwen3-tiny_full_adamw-foreach_bf16_ckpt-none_sdpa_b1_s64"
    assert row["measured"]["peak_phase"] == "backward" and row["measured"]["peak_step"] == 2
    assert row["measured"]["phase_peaks"]["step1"]["loaded"] == 100
    assert "lora_rank" not in row["config"] and "mode" not in row["config"]


def test_bad_rows_are_rejected():
    row = _row(matrix.tiny()[0])
    row["measured"]["by_category"]["other"] += 1
    with pytest.raises(ValueError):
        record.check_row(row)


def test_reserved_rows_keep_the_allocated_categories():
    # harness/cuda.py metric_rows: the reserved and nvidia-smi rows carry the allocated peak's
    # categories and phase peaks; only an allocated row must add up to its own peak.
    row = _row(matrix.tiny()[0])
    row["measured"]["peak_bytes"] += 4096
    with pytest.raises(ValueError):
        record.check_row(row)
    row["measured"]["metric"] = "max_memory_reserved"
    record.check_row(row)


ALL_DATA = sorted(glob.glob(os.path.join(VALIDATION, "data", "*.jsonl")))
# Rows converted from published GPU runs (validation/published/convert.py) carry their citation
# and caveats beside the measurement; the rows it leaves out carry the reason. Both are checked by
# test_published_rows_cite_their_source, the harness's own rows by the schema.
PUBLISHED = [p for p in ALL_DATA if os.path.basename(p).startswith("gpu-published")]
DATA = [p for p in ALL_DATA if p not in PUBLISHED]


@pytest.mark.parametrize("path", DATA, ids=[os.path.basename(p) for p in DATA])
def test_committed_data_follows_schema(path):
    ids = []
    with open(path) as f:
        for line in f:
            row = record.check_row(json.loads(line))
            assert os.path.exists(os.path.join(os.path.dirname(VALIDATION), row["config"]["model"]))
            ids.append((row["id"], row["measured"]["tracker"]))
    assert ids and len(ids) == len(set(ids))


@pytest.mark.parametrize("path", PUBLISHED, ids=[os.path.basename(p) for p in PUBLISHED])
def test_published_rows_cite_their_source(path):
    ids = []
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            ids.append(row["id"])
            if "excluded" in os.path.basename(path):
                assert row.get("reason"), row["id"]
                continue
            assert row["schema"] == record.SCHEMA, row["id"]
            assert row["source"]["url"].startswith("https://"), row["id"]
            assert row["measured"]["tracker"] == "published", row["id"]
            assert row["measured"]["peak_bytes"] > 0, row["id"]
            model = row["config"]["model"]  # a config file, or a preset / HF id trainmem knows
            if model.endswith(".json"):
                assert os.path.exists(os.path.join(os.path.dirname(VALIDATION), model)), row["id"]
    assert ids and len(ids) == len(set(ids))

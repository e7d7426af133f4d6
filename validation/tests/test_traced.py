"""The CUDA-matrix trace tooling that runs without a GPU: which rows alloc_stream.py traces,
traced_rows.py's rows, and segment_probe.py's reading of a memory snapshot."""
import json
import os
import subprocess

import alloc_stream
import matrix
import segment_probe
import traced_rows
from harness import record

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_traced_rows_skip_bitsandbytes_and_alloc_conf_twins():
    rows = alloc_stream.rows_to_trace()
    specs = {record.row_id(s): s for s in matrix.cuda() + matrix.traced_only()}
    assert rows and all(r in specs for r in rows)
    assert not any(specs[r]["method"] == "qlora" or specs[r]["optimizer"] != "adamw" for r in rows)
    # qwen3's expandable-segments row replays the trace of its loop without it; llama's has no
    # such twin and is traced itself.
    assert "qwen3-0.6b_full_adamw-foreach_bf16_ckpt-none_sdpa_b2_s512_expandable_segments-True" \
        not in rows
    assert any(r.startswith("llama-3.2-1b") and r.endswith("expandable_segments-True") for r in rows)


def test_a_row_with_alloc_conf_replays_its_twins_trace(monkeypatch):
    spec = next(s for s in matrix.cuda() if s.get("alloc_conf") and s["model"] == "qwen3-0.6b"
                and s["method"] == "full")
    monkeypatch.chdir(REPO)
    path = traced_rows.trace_of(spec)
    assert path is not None and "expandable" not in path


def test_committed_traced_rows_name_their_trace_and_device():
    with open(os.path.join(REPO, "validation", "data", "gpu-traced.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    assert len(rows) >= 4 and len(rows) % 2 == 0
    for r in rows:
        m = r["measured"]
        assert m["tracker"] == "traced-replay" and m["device"] == "cpu"
        assert m["metric"] in ("max_memory_allocated", "max_memory_reserved")
        assert os.path.exists(os.path.join(REPO, r["provenance"]["trace"]))
        assert m["peak_bytes"] == max(p[m["metric"].split("_")[-1]]
                                      for s in m["gpu_phases"].values() for p in s.values())


def test_segment_probe_pairs_each_segment_with_its_request():
    phases = segment_probe.PhaseTimes()
    phases.marks = [(100.0, "s1:forward"), (200.0, "s2:backward")]
    frame = {"filename": "loss.py", "line": 7, "name": "cross_entropy"}
    snapshot = {"device_traces": [[
        {"action": "alloc", "size": 512, "time_us": 50},
        {"action": "segment_alloc", "size": 20971520, "time_us": 150, "frames": [frame]},
        {"action": "alloc", "size": 4194304, "time_us": 150},
        {"action": "free_requested", "size": 4194304, "time_us": 160},
        {"action": "segment_alloc", "size": 622329856, "time_us": 250, "frames": []},
        {"action": "alloc", "size": 622329856, "time_us": 250},
    ]]}
    out = segment_probe.segments(snapshot, phases, "row")
    assert [(s["phase"], s["segment_bytes"], s["request_bytes"]) for s in out] == [
        ("s1:forward", 20971520, 4194304), ("s2:backward", 622329856, 622329856)]
    assert out[0]["frames"] == ["loss.py:7 cross_entropy"]

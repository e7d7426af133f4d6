#!/usr/bin/env python3
"""The traced allocation streams as GPU rows: validation/data/gpu-traced.jsonl.

Each configuration of the CUDA matrix (matrix.py cuda()) whose loop has a trace in
validation/data/alloc-traces/ (alloc_stream.py: the loop on CPU, every storage allocated and freed
in order) is replayed through trainmem's model of
PyTorch's caching allocator (build/bin/trainmem_replay_trace, with sm90's cuBLAS workspaces and
the row's PYTORCH_CUDA_ALLOC_CONF) and written as two rows of the measurement schema: the
replay's max_memory_allocated and max_memory_reserved, with the per-phase figures beside them.

What the rows are for: `trainmem validate validation/data/gpu-traced.jsonl` then compares the
allocator replay of the event stream trainmem derives from its ledger with the replay of the
stream the loop really issued. Both go through the same allocator model, which replays a traced
stream to CUDA's reserved memory to the MiB where the H200 measured it (docs/accuracy.md, "The
allocator model on a traced stream"), so the difference is the derived stream's error alone, on
configurations no GPU has measured yet. These rows are not GPU measurements: tracker
"traced-replay", device "cpu" (the kernels that ran), the H200 and CUDA 13.0 named as the device
whose workspaces the replay adds.

    python3 validation/traced_rows.py [--replay build/bin/trainmem_replay_trace]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import matrix  # noqa: E402
from harness import configs, record  # noqa: E402

REPO = os.path.dirname(HERE)
TRACES = os.path.join("validation", "data", "alloc-traces")
OUT = os.path.join("validation", "data", "gpu-traced.jsonl")
# The device the replay stands for: the workspaces it adds are sm90's (cublas_workspace("9.0")),
# the runtime the CUDA run's torch was built with.
DEVICE = {"device_name": "NVIDIA H200", "cuda": "13.0"}


def trace_of(spec):
    """The committed trace of a configuration's stream, or None. A row's PYTORCH_CUDA_ALLOC_CONF
    changes the allocator, not the stream: such a row replays the trace of the same loop without
    it when that is the one traced."""
    for s in (spec, {k: v for k, v in spec.items() if k != "alloc_conf"}):
        path = os.path.join(TRACES, record.row_id(s) + ".json")
        if os.path.exists(path):
            return path
    return None


def replay(replay_bin, trace_path, alloc_conf):
    cmd = [replay_bin, trace_path, "--json"] + (["--alloc-conf", alloc_conf] if alloc_conf else [])
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def gpu_phases(result):
    """{"step1": {"forward": {"allocated": .., "reserved": ..}}}, as the CUDA rows name phases."""
    out = {}
    for p in result["phases"]:
        step, phase = p["phase"].split(":")  # "s0:loaded" belongs to step 1, as on the GPU
        out.setdefault(f"step{max(int(step[1:]), 1)}", {})[phase] = {
            "allocated": p["allocated_bytes"], "reserved": p["reserved_bytes"]}
    return out


def peak_of(result, key):
    """The phase where the figure peaks: (step, phase)."""
    best = max(result["phases"], key=lambda p: p[key])
    step, phase = best["phase"].split(":")
    return max(int(step[1:]), 1), phase


def rows_of(spec, trace_path, replay_bin, command):
    with open(trace_path) as f:
        provenance = json.load(f)["provenance"]
    result = replay(replay_bin, trace_path, spec.get("alloc_conf", ""))
    config = record.config_block(spec, configs.write(spec["model"]))
    if spec.get("alloc_conf"):
        config["alloc_conf"] = spec["alloc_conf"]
    provenance = dict(provenance, trace=trace_path, replay_command=command)
    rows = []
    for metric, key, suffix in (("max_memory_allocated", "allocated_bytes", ""),
                                ("max_memory_reserved", "reserved_bytes", "_reserved")):
        step, phase = peak_of(result, key)
        rows.append({
            "schema": record.SCHEMA, "id": record.row_id(spec) + suffix, "config": config,
            "measured": {"peak_bytes": max(p[key] for p in result["phases"]), "peak_phase": phase,
                         "peak_step": step, "tracker": "traced-replay", "device": "cpu",
                         "metric": metric, "cuda_context": DEVICE,
                         "segments_allocated": result["segments_allocated"],
                         "gpu_phases": gpu_phases(result)},
            "provenance": provenance})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replay", default=os.path.join("build", "bin", "trainmem_replay_trace"))
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args(argv)
    os.chdir(REPO)
    command = f"python3 validation/traced_rows.py --replay {a.replay}"
    rows = []
    for spec in matrix.cuda() + matrix.traced_only():
        if trace := trace_of(spec):
            rows += rows_of(spec, trace, a.replay, command)
    with open(a.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"{len(rows)} rows from {len(rows) // 2} traces -> {a.out}")


if __name__ == "__main__":
    main()

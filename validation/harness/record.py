"""The measurement row (schema trainmem.measurement/1), its id, provenance and a checker.

`trainmem validate` reads these rows, so the keys are stable; additions must be backwards
compatible. The config block uses trainmem's flag vocabulary in snake_case.
"""
import datetime
import os
import platform
import sys

SCHEMA = "trainmem.measurement/1"
CONFIG_KEYS = ("model", "method", "optimizer", "optimizer_impl", "precision", "checkpointing",
               "attention", "batch", "seq", "grad_accum", "loss")
LORA_KEYS = ("lora_rank", "lora_alpha", "lora_dropout", "lora_targets")
FREEZE_KEYS = ("train_modules", "train_layers")
CATEGORIES = ("parameters", "gradients", "optimizer", "activations", "other")
PHASES = ("loaded", "forward", "end_of_forward", "backward", "end_of_backward", "optimizer_step")


# LoRA target lists that ids leave implicit (the rows measured before targets were tagged).
UNTAGGED_TARGETS = ("q,k,v,o,gate,up,down", "q,k,v,o")


def method_tag(spec):
    if spec["method"] in ("lora", "qlora"):
        tag = f"{spec['method']}-r{spec['lora_rank']}"
        if spec["lora_targets"] not in UNTAGGED_TARGETS:
            tag += "-" + spec["lora_targets"].replace(",", "")
        if spec.get("lora_dropout"):
            tag += f"-drop{spec['lora_dropout']:g}"
        if spec.get("dora"):
            tag += "-dora"
        return tag
    if spec["method"] == "freeze":
        return f"freeze-{spec['freeze_tag']}"
    return "full"


def row_id(spec):
    opt = spec["optimizer"] + (f"-{spec['optimizer_impl']}" if spec.get("optimizer_impl") else "")
    return "_".join([spec["model"], method_tag(spec), opt, spec["precision"],
                     f"ckpt-{spec['checkpointing']}", spec["attention"],
                     f"b{spec['batch']}", f"s{spec['seq']}"]
                    + ([f"ga{spec['grad_accum']}"] if spec.get("grad_accum", 1) > 1 else [])
                    # a CUDA row's PYTORCH_CUDA_ALLOC_CONF (matrix.cuda): expandable_segments-True
                    + ([spec["alloc_conf"].replace(":", "-").replace(",", "_")]
                       if spec.get("alloc_conf") else []))


def config_block(spec, model_path):
    cfg = {k: spec.get(k) for k in CONFIG_KEYS}
    cfg["model"] = model_path
    if spec["method"] in ("lora", "qlora"):
        cfg.update({k: spec[k] for k in LORA_KEYS})
        if spec.get("dora"):
            cfg["dora"] = True
    if spec["method"] == "freeze":
        cfg.update({k: spec[k] for k in FREEZE_KEYS})
    return cfg


def provenance(command):
    import peft
    import torch
    import transformers
    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "peft": peft.__version__, "python": platform.python_version(),
            "date": datetime.date.today().isoformat(), "command": command,
            "host": f"{platform.machine()}, {os.cpu_count()} cores"}


def measured_block(tracker, tracker_name, device="cpu"):
    step, phase = tracker.peak_at
    phase_peaks = {}
    for (s, p), nbytes in sorted(tracker.phase_peaks.items(), key=lambda kv: (kv[0][0], PHASES.index(kv[0][1]))):
        if s == 0:  # the loaded state belongs to step 1's picture
            phase_peaks.setdefault("step1", {})[p] = int(nbytes)
        else:
            phase_peaks.setdefault(f"step{s}", {})[p] = int(nbytes)
    return {"peak_bytes": int(tracker.peak_bytes), "peak_phase": phase, "peak_step": max(step, 1),
            "by_category": {k: int(tracker.peak_categories[k]) for k in CATEGORIES},
            "phase_peaks": phase_peaks, "tracker": tracker_name, "device": device}


def make_row(spec, model_path, measured, command):
    return {"schema": SCHEMA, "id": row_id(spec), "config": config_block(spec, model_path),
            "measured": measured, "provenance": provenance(command)}


def check_row(row):
    """Raise ValueError if a row does not follow the schema (used by tests and before writing)."""
    def need(cond, what):
        if not cond:
            raise ValueError(f"{row.get('id')}: {what}")
    need(row.get("schema") == SCHEMA, "schema")
    need(set(row) == {"schema", "id", "config", "measured", "provenance"}, "top-level keys")
    cfg, m = row["config"], row["measured"]
    need(all(k in cfg for k in CONFIG_KEYS), "config keys")
    need(cfg["method"] in ("full", "lora", "freeze", "qlora"), "method")
    need(cfg["method"] != "lora" or all(k in cfg for k in LORA_KEYS), "lora keys")
    need(cfg["method"] != "freeze" or all(k in cfg for k in FREEZE_KEYS), "freeze keys")
    need(isinstance(m["peak_bytes"], int) and m["peak_bytes"] > 0, "peak_bytes")
    need(m["peak_phase"] in PHASES, "peak_phase")
    need(m["peak_step"] in (1, 2), "peak_step")
    if m.get("tracker") == "traced-replay":
        # A CPU-traced stream replayed through the allocator model (traced_rows.py): its figures
        # per phase, no tensor categories (the replay sees sizes, not tensors).
        figure = {"max_memory_allocated": "allocated",
                  "max_memory_reserved": "reserved"}.get(m.get("metric"))
        need(figure is not None, "traced-replay metric")
        need(max(p[figure] for s in m["gpu_phases"].values() for p in s.values())
             == m["peak_bytes"], "phase figures reach the peak")
        need(m.get("device") == "cpu", "traced-replay device")
        need(all(k in row["provenance"] for k in ("torch", "transformers", "peft", "python", "date",
                                                  "command", "host", "trace")), "provenance")
        return row
    need(set(m["by_category"]) == set(CATEGORIES), "categories")
    # A CUDA row of the reserved or nvidia-smi figure keeps the allocated peak's categories and
    # phase peaks beside it (harness/cuda.py metric_rows): they describe max_memory_allocated.
    allocated = m.get("metric", "max_memory_allocated") == "max_memory_allocated"
    need(not allocated or sum(m["by_category"].values()) == m["peak_bytes"],
         "categories sum to the peak")
    need(set(m["phase_peaks"]) <= {"step1", "step2"}, "phase_peaks steps")
    need(not allocated or
         max(v for s in m["phase_peaks"].values() for v in s.values()) == m["peak_bytes"],
         "phase peaks reach the peak")
    need(m["tracker"] in ("memtracker", "dispatch", "fake+memtracker", "fake+dispatch", "cuda"), "tracker")
    need(all(k in row["provenance"] for k in ("torch", "transformers", "peft", "python", "date", "command", "host")),
         "provenance")
    return row


def command_line():
    return "python " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]) if sys.argv else "python"

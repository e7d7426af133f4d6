"""Live bytes per phase of the third of three training steps, for the CPU probes.

Each probe runs a model in a loop of the Trainer's shape (zero_grad, forward, backward, step) and
compares two variants phase by phase; step 3 is a steady step (the optimizer state exists and the
previous step's leftovers are what a long run has).
"""
from .dispatch_tracker import LiveStorageTracker

PHASES = ("forward", "end_of_forward", "backward", "end_of_backward", "optimizer_step",
          "after_step")


def third_step_peaks(model, opt, forward, external=(), keep=False):
    """forward() runs the model and returns its output (with .loss). The output is deleted once the
    loss is taken (the Trainer's compute_loss returns the loss only) unless `keep`, when it lives
    until the next step's forward rebinds it (a custom loop's `outputs = model(**batch)`).
    `external`: input tensors created before tracking, counted as inputs."""
    tracker = LiveStorageTracker(model)
    with tracker:
        tracker.track_external(model, *external)
        for step in (1, 2, 3):
            opt.zero_grad()
            tracker.mark(step, "forward")
            outputs = forward()
            loss = outputs.loss
            if not keep:
                del outputs
            tracker.mark(step, "end_of_forward")
            tracker.mark(step, "backward")
            loss.backward()
            tracker.mark(step, "end_of_backward")
            tracker.mark(step, "optimizer_step")
            opt.step()
            tracker.mark(step, "after_step")
    return {phase: peak for (step, phase), peak in tracker.phase_peaks.items() if step == 3}


def write_probe(path, script, doc, **versions):
    """Writes a probe's data with how it was measured: the command, the date, the host, Python,
    torch and transformers, and `versions` (other libraries the probe ran)."""
    import datetime
    import json
    import platform

    import torch
    import transformers

    doc = dict(doc)
    doc["provenance"] = {
        "command": f"validation/.venv/bin/python validation/{script} --out {path}",
        "date": datetime.date.today().isoformat(),
        "host": f"CPU ({platform.machine()})",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        **versions,
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")

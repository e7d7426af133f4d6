"""What the single-process CPU probes (compile_loss_probe.py, compile_layer_probe.py,
torchtune_loss_probe.py) share: the allocator events they read, where a figure came from, and how
their JSON is written."""
import datetime
import json
import platform
import sys

import torch


def allocation_sizes(prof):
    """The profiler's CPU allocator events in time order, in bytes (negative: a free). They are the
    raw kineto "[memory]" records: `prof.events()` folds allocations into their ops."""
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    return [e.nbytes() for e in sorted(events, key=lambda e: e.start_ns())]


def cpu_provenance(script, argv, **versions):
    """The command, the date, torch's and any other given library's version, the host."""
    return {"command": f"python validation/{script} " + " ".join(argv),
            "date": datetime.date.today().isoformat(), "torch": torch.__version__, **versions,
            "python": platform.python_version(),
            "host": "CPU (" + platform.machine() + "), 1 thread"}


def write_json(doc, path):
    """Sorted, indented JSON with a final newline, to `path` or to stdout when it is None."""
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)

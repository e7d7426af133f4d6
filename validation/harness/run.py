"""One configuration end to end: build, apply method, checkpointing, optimizer, trace two steps."""
import gc

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from . import build, configs, methods, optim, record, step
from .tracker import PhaseMemTracker


def _make_tracker(kind, model):
    if kind == "dispatch":
        from .dispatch_tracker import LiveStorageTracker
        return LiveStorageTracker(model)
    return PhaseMemTracker(model)


def _prepare(spec, fake_mode):
    cfg = configs.load(spec["model"])
    model = build.build_model(cfg, spec["precision"], spec["attention"], fake_mode=fake_mode)
    if fake_mode is None:
        model = methods.apply_method(model, spec)
    else:
        with fake_mode, methods.adapters_stay_put():
            model = methods.apply_method(model, spec)
    if spec["checkpointing"] == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    opt = optim.make_optimizer(spec, model)
    return cfg, model, opt


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def measure(spec, command="python validation/measure.py"):
    """Measure one spec (a matrix entry) and return its schema row."""
    if spec.get("mode") == "cuda":
        return _measure_cuda(spec, command)
    fake = spec.get("mode") == "fake"
    kind = spec.get("tracker", "memtracker")
    gc.collect()
    fake_mode = FakeTensorMode() if fake else None
    cfg, model, opt = _prepare(spec, fake_mode)
    with (fake_mode if fake else _Null()), (build.unpacked_batches() if fake else _Null()):
        input_ids, labels = step.make_batch(spec["batch"], spec["seq"], cfg["vocab_size"])
        tracker = _make_tracker(kind, model)
        tracker.track_external(model, opt, input_ids, labels)
        step.train_steps(model, opt, tracker, input_ids, labels, spec["precision"], steps=2,
                         grad_accum=spec.get("grad_accum", 1))
    name = ("fake+" if fake else "") + tracker.name
    measured = record.measured_block(tracker, name)
    row = record.make_row(spec, configs.write(spec["model"]), measured, command)
    del model, opt, tracker, input_ids, labels
    gc.collect()
    return record.check_row(row)


def _measure_cuda(spec, command):
    """GPU rows (QLoRA, 8-bit AdamW): the allocator's peaks between the same phase marks."""
    from . import cuda
    cfg = configs.load(spec["model"])
    model, opt = cuda.prepare(spec, cfg)
    input_ids, labels = (t.cuda() for t in step.make_batch(spec["batch"], spec["seq"], cfg["vocab_size"]))
    tracker = cuda.CudaTracker(model)
    tracker.track_external(opt)
    step.train_steps(model, opt, tracker, input_ids, labels, spec["precision"], steps=2, device="cuda",
                     grad_accum=spec.get("grad_accum", 1))
    measured = record.measured_block(tracker, "cuda", device="cuda")
    measured["cuda_context"] = tracker.context
    measured["gpu_phases"] = tracker.gpu_phases()
    row = record.make_row(spec, configs.write(spec["model"]), measured, command)
    if spec.get("alloc_conf"):
        row["config"]["alloc_conf"] = spec["alloc_conf"]
    record.check_row(row)
    return cuda.metric_rows(row, tracker)

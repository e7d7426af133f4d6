#!/usr/bin/env python3
"""Trace the allocation stream of one training loop on CPU: every storage allocated and freed,
in the order PyTorch issues them, between the harness's phase marks.

The stream is what the CUDA caching allocator would be asked for by the same loop (the harness's
two steps: HF's loss from `labels=`, the output dropped before backward), less what only CUDA
allocates (cuBLAS workspaces; kernel-internal scratch of CUDA kernels, where the CPU kernel
differs). `build/bin/trainmem_replay_trace TRACE` replays it through trainmem's allocator model,
which separates that model's error from the error of the event stream trainmem derives from its
ledger (docs/accuracy.md, "The allocator model on a traced stream"). Real tensors, so a 0.6B model
takes a few minutes on two cores.

    validation/.venv/bin/python validation/alloc_stream.py \\
        --row qwen3-0.6b_full_adamw-foreach_bf16_ckpt-none_sdpa_b2_s512 --out trace.json

`--row` names a configuration of `matrix.py cuda()` (its id, as in gpu-measured.jsonl; `--list`
prints the ones `make alloc-traces` traces);
`--kv-probe 100` traces kv_growth_probe.py's generate() instead (about 7 minutes on two cores).
"""
import argparse
import json
import os
import sys
import weakref

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import matrix  # noqa: E402
from harness import build, configs, methods, optim, record, step  # noqa: E402
from harness.marks import PhaseMarker  # noqa: E402


class StreamTracer(TorchDispatchMode):
    """Records an allocation for each new storage an op returns, and its free when it dies.

    Storages are keyed by data pointer (views share their base's); a weak reference to the
    storage's Python object reports the free, in the order CPython's reference counting drops it.
    """

    def __init__(self):
        super().__init__()
        self.events, self.phases = [], []
        self.live, self.next_id = {}, 0

    def mark(self, name):
        if not self.phases or self.phases[-1] != name:  # the loop marks "s0:loaded" again
            self.phases.append(name)

    def phase(self):
        return len(self.phases) - 1

    def track(self, storage):
        key = storage.data_ptr()
        if storage.nbytes() == 0 or key in self.live:
            return
        sid = self.next_id
        self.next_id += 1

        def freed(_ref, sid=sid, key=key):
            self.events.append(["f", sid, 0, self.phase()])
            self.live.pop(key, None)

        self.live[key] = weakref.ref(storage, freed)
        self.events.append(["a", sid, int(storage.nbytes()), self.phase()])

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                self.track(t.untyped_storage())
        return out


class PhaseMarks(PhaseMarker):
    """Phase marks into the tracer's phase list ("s1:forward")."""

    def __init__(self, tracer):
        self.tracer = tracer

    def mark(self, step_number, phase):
        self.tracer.mark(f"s{step_number}:{phase}")


def traceable(spec):
    """bitsandbytes (4-bit weights, 8-bit and paged AdamW) has no CPU path."""
    return spec["method"] != "qlora" and spec["optimizer"] == "adamw"


def rows_to_trace():
    """The CUDA matrix's traceable rows and the families traced only here (matrix.traced_only),
    less those whose loop another row already is: a row's
    PYTORCH_CUDA_ALLOC_CONF changes the allocator, not the stream, and the replay applies it."""
    specs = matrix.cuda() + matrix.traced_only()
    ids = [record.row_id(s) for s in specs]
    return [record.row_id(s) for s in specs if traceable(s) and not (
        s.get("alloc_conf") and record.row_id(dict(s, alloc_conf=None)) in ids)]


def trace_generate(generated):
    """kv_growth_probe.py's generate() (its model and batch, on CPU): phases loaded, generate."""
    import kv_growth_probe as probe
    model = probe.probe_model()
    ids = torch.randint(3, 1024, (probe.BATCH, probe.PROMPT))
    mask = torch.ones_like(ids)
    tracer = StreamTracer()
    tracer.mark("loaded")
    with tracer:
        for t in [*model.parameters(), *model.buffers(), ids, mask]:
            tracer.track(t.untyped_storage())
        tracer.mark("generate")
        with torch.no_grad():
            model.generate(ids, attention_mask=mask, max_new_tokens=generated,
                           min_new_tokens=generated, do_sample=False, pad_token_id=0,
                           use_cache=True)
    return tracer


def write_trace(tracer, row, out):
    """The trainmem.alloc-trace/1 document (src/gpu/alloc_trace.h), with its provenance."""
    doc = {"schema": "trainmem.alloc-trace/1", "row": row, "phases": tracer.phases,
           "events": tracer.events, "provenance": record.provenance(record.command_line())}
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(f"{len(tracer.events)} events in {len(tracer.phases)} phases -> {out}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--row", help="a matrix.cuda() configuration id")
    ap.add_argument("--kv-probe", type=int, metavar="TOKENS",
                    help="instead, kv_growth_probe.py's generate() of TOKENS new tokens")
    ap.add_argument("--out", help="the trace (trainmem.alloc-trace/1 JSON)")
    ap.add_argument("--list", action="store_true", help="print the rows to trace, one a line")
    a = ap.parse_args(argv)
    if a.list:
        print("\n".join(rows_to_trace()))
        return
    if not a.out:
        raise SystemExit("give --out")
    if a.kv_probe:
        write_trace(trace_generate(a.kv_probe), f"kv-probe-{a.kv_probe}", a.out)
        return
    if not a.row:
        raise SystemExit("give --row or --kv-probe")
    spec = dict(matrix.cuda_spec(a.row), mode="real")
    if not traceable(spec):
        raise SystemExit("bitsandbytes needs CUDA: trace the AdamW rows without 4-bit weights")
    torch.manual_seed(0)
    cfg = configs.load(spec["model"])
    model = methods.apply_method(build.build_model(cfg, spec["precision"], spec["attention"]), spec)
    if spec["checkpointing"] == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    opt = optim.make_optimizer(spec, model)
    input_ids, labels = step.make_batch(spec["batch"], spec["seq"], cfg["vocab_size"])
    tracer = StreamTracer()
    tracer.mark("s0:loaded")
    with tracer:
        for t in [*model.parameters(), *model.buffers(), input_ids, labels]:
            tracer.track(t.untyped_storage())  # in place before the step, as on the GPU
        step.train_steps(model, opt, PhaseMarks(tracer), input_ids, labels, spec["precision"],
                         steps=2)
    write_trace(tracer, a.row, a.out)


if __name__ == "__main__":
    main()

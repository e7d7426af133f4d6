"""One rank of a multi-rank measurement: `torchrun --standalone --nproc-per-node N` runs this file.

    torchrun --standalone --nproc-per-node 2 validation/harness/dist_worker.py SPEC_JSON OUT_DIR

The rank builds the model exactly as the single-device harness does (harness/build.py, methods.py),
wraps it for the engine (dist_wrap.py), makes the optimizer over the wrapped parameters, and traces
two optimizer steps with the same PhaseMemTracker and step loop (harness/step.py). It writes its
measured block to OUT_DIR/rank{R}.json; validation/distributed.py merges the ranks into one row.
The tracker starts before the engine wraps the model, so buffers an engine allocates at
construction (DDP's gradient buckets) are traced as well as the ones it allocates in the step.
"""
import gc
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from harness import build, configs, dist_wrap, methods, optim, record, step  # noqa: E402
from harness.tracker import PhaseMemTracker, _NoHandle  # noqa: E402


class RankTracker(PhaseMemTracker):
    """PhaseMemTracker that also accepts FSDP1's parameter views and the engines' new parameters.

    With use_orig_params=True, FSDP1 exposes each original parameter as a view into its flat
    parameter while the unit is unsharded; such a view is not a leaf, and MemTracker's grad hooks
    (registered at the first forward of a module) raise on non-leaf tensors. Views get a no-op
    handle instead, as frozen parameters do: their bytes are the flat parameter's, which is traced
    as every other storage is, and its gradient still shows up as a storage created in backward.
    Frozen parameters (LoRA's base) get the same no-op handle when first seen here too: FSDP2
    replaces every parameter with a new sharded one after PhaseMemTracker seeded the originals.
    """

    def _track_module_params_and_buffers(self, module, install_grad_hooks=True):
        for p in module.parameters():
            if (not p.is_leaf or not p.requires_grad) and p not in self._param_to_grad_hook_handles:
                self._param_to_grad_hook_handles[p] = (_NoHandle(), _NoHandle())
        return super()._track_module_params_and_buffers(module, install_grad_hooks)


def engine_steps(engine, tracker, input_ids, labels, steps=2):
    """harness/step.py's loop and marks through DeepSpeed's engine: engine.backward(loss) runs the
    ZeRO gradient reduction and engine.step() the optimizer step and zero_grad."""
    with tracker:
        tracker.mark(0, "loaded")
        for s in range(1, steps + 1):
            tracker.mark(s, "forward")
            out = engine(input_ids=input_ids, labels=labels, use_cache=False)
            loss = out.loss
            del out
            tracker.mark(s, "end_of_forward")
            tracker.mark(s, "backward")
            engine.backward(loss)
            del loss
            tracker.mark(s, "end_of_backward")
            tracker.mark(s, "optimizer_step")
            engine.step()
            tracker.end_of_step()


def main(spec_json, out_dir):
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    spec = json.loads(spec_json)
    dist.init_process_group("gloo")
    world, rank = dist_wrap.world()
    assert world == spec["world_size"], (world, spec["world_size"])
    cfg = configs.load(spec["model"])
    # DeepSpeed's bf16 recipe (bf16-fp32-master) starts from a bf16 model, as the bf16 rows do.
    precision = "bf16" if spec["precision"] == "bf16-fp32-master" else spec["precision"]
    model = build.build_model(cfg, precision, spec["attention"])
    model = methods.apply_method(model, spec)
    if spec["checkpointing"] == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    input_ids, labels = step.make_batch(spec["batch"], spec["seq"], cfg["vocab_size"], seed=rank)
    tracker = RankTracker(model)
    tracker.track_external(model, input_ids, labels)
    deepspeed = spec["engine_tag"].startswith("zero")
    with tracker:
        # Wrapping inside the tracker: the engine's construction-time buffers are traced; the
        # sharded parameters FSDP makes are the rank's parameters from here on.
        if deepspeed:
            wrapped, opt = dist_wrap.deepspeed_engine(model, spec)
        else:
            wrapped = dist_wrap.wrap(model, spec["engine_tag"])
    wrapped.train()
    gc.collect()  # what wrapping left for the collector (FSDP1's flattening) is not the rank's
    if not deepspeed:
        opt = optim.make_optimizer(spec, wrapped)
    tracker.track_external(wrapped, opt)
    if deepspeed:
        engine_steps(wrapped, tracker, input_ids, labels, steps=2)
    else:
        step.train_steps(wrapped, opt, tracker, input_ids, labels, spec["precision"], steps=2,
                         grad_accum=spec.get("grad_accum", 1))
    measured = record.measured_block(tracker, tracker.name)
    measured["rank"] = rank
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(measured, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

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
    """PhaseMemTracker that also accepts FSDP1's parameter views.

    With use_orig_params=True, FSDP1 exposes each original parameter as a view into its flat
    parameter while the unit is unsharded; such a view is not a leaf, and MemTracker's grad hooks
    (registered at the first forward of a module) raise on non-leaf tensors. Views get a no-op
    handle instead, as frozen parameters do: their bytes are the flat parameter's, which is traced
    as every other storage is, and its gradient still shows up as a storage created in backward.
    """

    def _track_module_params_and_buffers(self, module, install_grad_hooks=True):
        for p in module.parameters():
            if not p.is_leaf and p not in self._param_to_grad_hook_handles:
                self._param_to_grad_hook_handles[p] = (_NoHandle(), _NoHandle())
        return super()._track_module_params_and_buffers(module, install_grad_hooks)


def main(spec_json, out_dir):
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    spec = json.loads(spec_json)
    dist.init_process_group("gloo")
    world, rank = dist_wrap.world()
    assert world == spec["world_size"], (world, spec["world_size"])
    cfg = configs.load(spec["model"])
    model = build.build_model(cfg, spec["precision"], spec["attention"])
    model = methods.apply_method(model, spec)
    if spec["checkpointing"] == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    input_ids, labels = step.make_batch(spec["batch"], spec["seq"], cfg["vocab_size"], seed=rank)
    tracker = RankTracker(model)
    tracker.track_external(model, input_ids, labels)
    with tracker:
        # Wrapping inside the tracker: the engine's construction-time buffers are traced; the
        # sharded parameters FSDP makes are the rank's parameters from here on.
        wrapped = dist_wrap.wrap(model, spec["engine_tag"])
    wrapped.train()
    gc.collect()  # what wrapping left for the collector (FSDP1's flattening) is not the rank's
    opt = optim.make_optimizer(spec, wrapped)
    tracker.track_external(wrapped, opt)
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

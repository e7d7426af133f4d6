"""The GPU-only path: QLoRA (bitsandbytes NF4 base) and 8-bit AdamW, measured by CUDA's allocator.

Neither can run on CPU (bitsandbytes kernels are CUDA; fake tensors cannot stand in for them),
so these rows come only from `--matrix cuda` on a machine with a GPU. No GPU was available when the
committed data was made, so this module has not been run yet; see docs/accuracy-measurement.md.
Peaks here are torch.cuda.max_memory_allocated between phase marks (what a tensor tracker
approximates), with max_memory_reserved and mem_get_info kept beside them for context.
"""
import torch

from .tracker import CATEGORIES


def adamw_8bit(params):
    import bitsandbytes as bnb
    return bnb.optim.AdamW8bit(params, lr=1e-5)


def quantize_nf4(model, skip=("lm_head",)):
    """Replace every nn.Linear (not lm_head) with a bitsandbytes Linear4bit holding NF4 weights.

    Mirrors BitsAndBytesConfig(load_in_4bit, nf4, double quant, bf16 compute): the weights are
    quantised when the module moves to the GPU.
    """
    import bitsandbytes as bnb
    for parent_name, parent in list(model.named_modules()):
        for name, child in list(parent.named_children()):
            full = f"{parent_name}.{name}" if parent_name else name
            if not isinstance(child, torch.nn.Linear) or any(s in full for s in skip):
                continue
            q = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                  compute_dtype=torch.bfloat16, compress_statistics=True, quant_type="nf4")
            q.weight = bnb.nn.Params4bit(child.weight.data.to(torch.bfloat16), requires_grad=False,
                                         compress_statistics=True, quant_type="nf4")
            if child.bias is not None:
                q.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
            setattr(parent, name, q)
    return model.cuda()


class CudaTracker:
    """Same interface as PhaseMemTracker, reading the caching allocator's peak between marks."""

    name = "cuda"

    def __init__(self, model):
        self.model, self.optimizers = model, []
        self.step, self.phase = 0, "loaded"
        self.phase_peaks, self.peak_bytes, self.peak_at = {}, 0, (0, "loaded")
        self.peak_categories = dict.fromkeys(CATEGORIES, 0)
        self.context = {}

    def track_external(self, *objs):
        self.optimizers += [o for o in objs if isinstance(o, torch.optim.Optimizer)]

    def _static_bytes(self):
        size = lambda ts: sum(t.numel() * t.element_size() for t in ts)  # noqa: E731
        params = list(self.model.parameters())
        states = [v for o in self.optimizers for s in o.state.values() for v in s.values()
                  if isinstance(v, torch.Tensor) and v.is_cuda]
        return size(params), size([p.grad for p in params if p.grad is not None]), size(states)

    def _close_phase(self):
        torch.cuda.synchronize()
        peak = int(torch.cuda.max_memory_allocated())
        key = (self.step, self.phase)
        self.phase_peaks[key] = max(peak, self.phase_peaks.get(key, 0))
        if peak > self.peak_bytes:
            self.peak_bytes, self.peak_at = peak, key
            params, grads, states = self._static_bytes()  # approximate: sizes when the phase ends
            rest = max(peak - params - grads - states, 0)
            self.peak_categories = {"parameters": params, "gradients": grads, "optimizer": states,
                                    "activations": 0, "other": rest}
            self.peak_categories["parameters"] = peak - grads - states - rest
        torch.cuda.reset_peak_memory_stats()

    def mark(self, step, phase):
        self._close_phase()
        self.step, self.phase = step, phase

    def end_of_step(self):
        pass

    def __enter__(self):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        return self

    def __exit__(self, *args):
        self._close_phase()
        free, total = torch.cuda.mem_get_info()
        self.context = {"max_reserved_bytes": int(torch.cuda.max_memory_reserved()),
                        "device_total_bytes": int(total), "device_free_bytes": int(free)}
        return False


def prepare(spec, cfg_dict):
    """Build model and optimizer on the GPU for a `mode: cuda` spec (qlora or adamw-8bit)."""
    from peft import prepare_model_for_kbit_training

    from . import build, methods, optim
    model = build.build_model(cfg_dict, spec["precision"], spec["attention"])
    if spec["method"] == "qlora":
        model = quantize_nf4(model)
        model = prepare_model_for_kbit_training(
            model, use_gradient_checkpointing=spec["checkpointing"] == "full",
            gradient_checkpointing_kwargs={"use_reentrant": False})
        model = methods.apply_lora(model, spec)
    else:
        model = methods.apply_method(model, spec).cuda()
        if spec["checkpointing"] == "full":
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    return model, optim.make_optimizer(spec, model)

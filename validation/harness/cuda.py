"""The GPU path: every `--matrix cuda` configuration measured by CUDA's caching allocator.

Full, LoRA and QLoRA (bitsandbytes NF4 base), AdamW / 8-bit AdamW / paged AdamW, checkpointing on
and off, expandable_segments on and off (validation/matrix.py cuda()). bitsandbytes kernels are
CUDA-only, so these rows come only from a machine with a GPU:

    python validation/measure.py --matrix cuda --out validation/data/gpu-measured.jsonl

Each configuration runs in its own process (PYTORCH_CUDA_ALLOC_CONF must be set before CUDA
initialises) and gives three rows, one per figure `trainmem validate` compares like with like:
torch.cuda.max_memory_allocated, torch.cuda.max_memory_reserved, and the device's used memory
(total - free from cudaMemGetInfo: what nvidia-smi shows for this process on an otherwise idle
GPU, CUDA context included). Per-phase figures of all three ride along in `gpu_phases`.
First run on an H200 on 2026-12-04 (7 configurations: validation/README.md, "The CUDA run").
"""
import copy
import os

import torch

from .tracker import CATEGORIES

# Where the random weights are initialised: on the GPU directly (a 1B model's init on the lent
# machine's CPUs took tens of seconds a row), as from_pretrained(device_map="cuda") places them.
BUILD_DEVICE = "cuda"


def adamw_8bit(params):
    import bitsandbytes as bnb
    return bnb.optim.AdamW8bit(params, lr=1e-5)


def paged_adamw(params):
    import bitsandbytes as bnb
    return bnb.optim.PagedAdamW(params, lr=1e-5)


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
    model = model.cuda()
    # The 16-bit weights just quantised were built on the GPU (BUILD_DEVICE); from_pretrained
    # quantises each tensor as it loads, so its cache never held the whole 16-bit model.
    torch.cuda.empty_cache()
    return model


class CudaTracker:
    """Same interface as PhaseMemTracker, reading the caching allocator between phase marks.

    Per phase: the peak of memory_allocated and of memory_reserved (both reset at each mark), and
    the device's used memory at the end of the phase (cudaMemGetInfo: total - free).
    """

    name = "cuda"

    def __init__(self, model):
        self.model, self.optimizers = model, []
        self.step, self.phase = 0, "loaded"
        self.phase_peaks, self.peak_bytes, self.peak_at = {}, 0, (0, "loaded")
        self.phase_reserved, self.phase_device = {}, {}
        self.max_reserved, self.max_device = 0, 0
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
        reserved = int(torch.cuda.max_memory_reserved())
        free, total = torch.cuda.mem_get_info()
        used = int(total - free)
        key = (self.step, self.phase)
        self.phase_peaks[key] = max(peak, self.phase_peaks.get(key, 0))
        self.phase_reserved[key] = max(reserved, self.phase_reserved.get(key, 0))
        self.phase_device[key] = max(used, self.phase_device.get(key, 0))
        self.max_reserved = max(self.max_reserved, reserved)
        self.max_device = max(self.max_device, used)
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
        self.context = {"device_total_bytes": int(total), "device_free_bytes": int(free),
                        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                        "device_name": torch.cuda.get_device_name(),
                        "cuda": torch.version.cuda}
        return False

    def gpu_phases(self):
        """{"step1": {"forward": {"allocated": .., "reserved": .., "device_used": ..}, ..}, ..}"""
        out = {}
        for (s, p), alloc in self.phase_peaks.items():
            out.setdefault(f"step{max(s, 1)}", {})[p] = {
                "allocated": int(alloc), "reserved": self.phase_reserved[(s, p)],
                "device_used": self.phase_device[(s, p)]}
        return out


def metric_rows(row, tracker):
    """The one measured row as three, one per figure: allocated, reserved, nvidia-smi."""
    out = []
    for metric, value, suffix in (("max_memory_allocated", tracker.peak_bytes, ""),
                                  ("max_memory_reserved", tracker.max_reserved, "_reserved"),
                                  ("nvidia-smi", tracker.max_device, "_device")):
        r = copy.deepcopy(row)
        r["id"] += suffix
        r["measured"]["peak_bytes"] = int(value)
        r["measured"]["metric"] = metric
        out.append(r)
    return out


def prepare(spec, cfg_dict):
    """Build model and optimizer on the GPU for a `mode: cuda` spec (qlora or adamw-8bit)."""
    from peft import prepare_model_for_kbit_training

    from . import build, methods, optim
    with torch.device(BUILD_DEVICE):
        model = build.build_model(cfg_dict, spec["precision"], spec["attention"])
    if spec.get("alloc_conf", "") != os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") and \
            spec.get("alloc_conf"):
        raise RuntimeError("alloc_conf must be set in the environment before CUDA starts "
                           "(measure.py runs each cuda row in its own process)")
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

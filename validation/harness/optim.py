"""Optimizer factory. CPU defaults to the per-parameter loop, so foreach/fused are always explicit."""
import torch


def make_optimizer(spec, model):
    params = [p for p in model.parameters() if p.requires_grad]
    name, impl = spec["optimizer"], spec.get("optimizer_impl")
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-5, foreach=impl == "foreach", fused=impl == "fused")
    if name == "sgd":  # plain SGD: no momentum buffer (trainmem's sgd, not sgd_momentum)
        return torch.optim.SGD(params, lr=1e-3, momentum=0.0, foreach=impl == "foreach")
    if name == "adafactor":
        from transformers.optimization import Adafactor
        # Fixed lr without parameter scaling: scale_parameter reads a tensor into Python, which
        # fake tensors cannot do; the factored second moment is the same either way.
        return Adafactor(params, lr=1e-4, scale_parameter=False, relative_step=False, warmup_init=False)
    if name == "adamw-8bit":
        from . import cuda
        return cuda.adamw_8bit(params)
    if name == "paged-adamw":
        from . import cuda
        return cuda.paged_adamw(params)
    raise ValueError(f"unknown optimizer {name!r}")

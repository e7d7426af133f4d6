"""Data-parallel engines for the multi-rank harness: DDP, FSDP1 and FSDP2 wrapped as a user would.

Every engine runs on CPU with the gloo backend (torchrun on one host). The model is built on every
rank (same seed), the engine wraps it, and the optimizer is made over the wrapped parameters:

- ddp: `DistributedDataParallel(model)` with its defaults (bucket_cap_mb 25,
  gradient_as_bucket_view False), as HF Trainer does under torchrun.
- fsdp1: `FullyShardedDataParallel` with a `ModuleWrapPolicy` on the decoder-layer class
  (accelerate's TRANSFORMER_BASED_WRAP), sharding strategy FULL_SHARD or SHARD_GRAD_OP, defaults
  otherwise (limit_all_gathers True, BACKWARD_PRE, no mixed precision: the model is already bf16);
  `use_orig_params=True` (accelerate's default, and needed when LoRA freezes the base).
- fsdp2: `fully_shard` on every decoder layer, then on the root, reshard_after_forward True
  (FULL_SHARD) or False (SHARD_GRAD_OP); the root is never resharded after forward (FSDP2's rule).
- fsdp2-full-units: as fsdp2-full, with the input embedding and the output projection sharded as
  units of their own before the layers, as torchtune's `custom_sharded_layers: ['tok_embeddings',
  'output']` does (torchtune training/_distributed.py shard_model: every module whose name
  matches, bottom-up, then the root).
- zero1/2/3: `deepspeed.initialize` (DeepSpeed's CPU accelerator, gloo) with its bf16 config and
  ZeRO defaults, and a client `torch.optim.AdamW(foreach=True)` (zero_allow_untested_optimizer), so
  the Adam arithmetic is the same as the other rows; DeepSpeed keeps the fp32 master and the Adam
  states on its fp32 partitions (trainmem's bf16-mixed recipe).
"""
import torch
import torch.distributed as dist

# layout tag -> (trainmem layout settings in flag vocabulary)
LAYOUTS = {
    "ddp": dict(engine="ddp"),
    "fsdp1-full": dict(engine="fsdp", fsdp="full", fsdp_version=1),
    "fsdp1-grad-op": dict(engine="fsdp", fsdp="grad-op", fsdp_version=1),
    "fsdp2-full": dict(engine="fsdp", fsdp="full", fsdp_version=2),
    "fsdp2-grad-op": dict(engine="fsdp", fsdp="grad-op", fsdp_version=2),
    "fsdp2-full-units": dict(engine="fsdp", fsdp="full", fsdp_version=2,
                             custom_sharded_layers="tok_embeddings,output"),
    "zero1": dict(engine="deepspeed", zero=1),
    "zero2": dict(engine="deepspeed", zero=2),
    "zero3": dict(engine="deepspeed", zero=3),
}


def deepspeed_engine(model, spec):
    """DeepSpeed's engine and the client AdamW it steps (ZeRO stage from the tag)."""
    import deepspeed
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, foreach=True)
    config = {"train_micro_batch_size_per_gpu": spec["batch"],
              "gradient_accumulation_steps": spec.get("grad_accum", 1),
              "bf16": {"enabled": True},
              "zero_optimization": {"stage": int(spec["engine_tag"][len("zero"):])},
              "zero_allow_untested_optimizer": True}
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=config)
    return engine, opt


def decoder_layers(model):
    """The decoder blocks (the units FSDP wraps): the ModuleList named `layers` or `h`."""
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.ModuleList) and name.split(".")[-1] in ("layers", "h"):
            return list(mod)
    raise ValueError("no decoder layer list found")


def wrap(model, engine_tag):
    """Wrap `model` for the engine; returns the module to call and train."""
    if engine_tag == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model)
    if engine_tag.startswith("fsdp1-"):
        from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        strategy = {"full": ShardingStrategy.FULL_SHARD,
                    "grad-op": ShardingStrategy.SHARD_GRAD_OP}[engine_tag[len("fsdp1-"):]]
        layer_cls = type(decoder_layers(model)[0])
        return FullyShardedDataParallel(model, sharding_strategy=strategy,
                                        auto_wrap_policy=ModuleWrapPolicy({layer_cls}),
                                        use_orig_params=True, device_id=torch.device("cpu"))
    if engine_tag.startswith("fsdp2-"):
        from torch.distributed.fsdp import fully_shard
        mode, _, units = engine_tag[len("fsdp2-"):].partition("-")
        reshard = {"full": True, "grad-op": False}[mode]
        if units == "units":
            # torchtune shards bottom-up in reversed named_modules() order: the output projection
            # comes after the layers in module order, so it is wrapped first, the embedding last.
            fully_shard(model.get_output_embeddings(), reshard_after_forward=reshard)
        for layer in decoder_layers(model):
            fully_shard(layer, reshard_after_forward=reshard)
        if units == "units":
            fully_shard(model.get_input_embeddings(), reshard_after_forward=reshard)
        fully_shard(model, reshard_after_forward=reshard)
        return model
    raise ValueError(f"unknown engine {engine_tag!r}")


def world():
    return dist.get_world_size(), dist.get_rank()

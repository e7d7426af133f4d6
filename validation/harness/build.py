"""Model construction from a config dict: real random weights, or fake tensors for full sizes.

Nothing is downloaded: every model comes from AutoModelForCausalLM.from_config. Full-size models
are built inside FakeTensorMode on a fake *cpu* device (fake cuda on a GPU-less box reaches CUDA
device queries), so an 8B model costs no memory to trace.
"""
import contextlib
import types

import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModelForCausalLM

DTYPE_OF_PRECISION = {"bf16": torch.bfloat16, "autocast-bf16": torch.float32, "fp32": torch.float32}


def hf_config(cfg_dict):
    """An HF PretrainedConfig from a config.json dict (model_type picks the class)."""
    d = dict(cfg_dict)
    d.pop("architectures", None)
    d.pop("torch_dtype", None)
    model_type = d.pop("model_type")
    cfg = AutoConfig.for_model(model_type, **d)
    cfg.use_cache = False
    return cfg


def build_model(cfg_dict, precision, attention, fake_mode=None, seed=0):
    """Build the model in the weight dtype of the precision mode, in train mode."""
    cfg = hf_config(cfg_dict)
    dtype = DTYPE_OF_PRECISION[precision]
    if fake_mode is None:
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=attention)
    else:
        # Random init ops only produce fake outputs under FakeTensorMode, so from_config can run
        # inside it directly (building on meta then to_empty() trips on real meta inputs).
        with fake_mode:
            model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=attention)
        if model.config._experts_implementation == "eager":
            use_balanced_experts(model)  # grouped_mm (transformers' default) runs as it is
    model.train()
    return model


def _balanced_experts_forward(self, hidden_states, top_k_index, top_k_weights):
    """Expert loop with static shapes: each expert takes an equal share of the T*k routed slots.

    Only used when the experts run transformers' "eager" loop. transformers 5.x picks its
    "grouped_mm" experts implementation by default (modeling_utils.get_correct_experts_implementation),
    which sorts the T*k slots by expert and has static shapes, so fake tensors run it unchanged;
    real runs use it too, so fake and real then trace the same ops.

    HF's eager loop finds each expert's tokens with nonzero()/where(), whose output shapes depend
    on data and cannot run under FakeTensorMode. The memory of the loop only depends on how many
    slots each expert gets, and their sum is always T*k, so a balanced split is a fair stand-in.
    """
    tokens = hidden_states.shape[0]
    top_k = top_k_index.shape[1]
    slots = tokens * top_k
    per_expert = -(-slots // self.num_experts)
    slot_ids = torch.arange(slots, device=hidden_states.device)
    flat_weights = top_k_weights.reshape(-1)
    final = torch.zeros_like(hidden_states)
    for e in range(self.num_experts):
        lo, hi = e * per_expert, min((e + 1) * per_expert, slots)
        if lo >= hi:
            continue
        sl = slot_ids[lo:hi]
        token_idx = sl // top_k
        gate, up = F.linear(hidden_states[token_idx], self.gate_up_proj[e]).chunk(2, dim=-1)
        out = F.linear(self.act_fn(gate) * up, self.down_proj[e]) * flat_weights[sl, None]
        final.index_add_(0, token_idx, out.to(final.dtype))
    return final


def use_balanced_experts(model):
    """Swap every 3-D-weight experts module's forward for the static-shape version."""
    n = 0
    for mod in model.modules():
        if hasattr(mod, "gate_up_proj") and hasattr(mod, "num_experts") and hasattr(mod, "down_proj"):
            mod.forward = types.MethodType(_balanced_experts_forward, mod)
            n += 1
    return n


@contextlib.contextmanager
def unpacked_batches():
    """Tell transformers the batch is not packed, as a real run would find out from the data.

    With no attention mask, transformers checks the position ids for packed sequences. That check
    reads values, so under fake tensors it is skipped and a packed mask is assumed. An explicit 4-D
    mask then replaces SDPA's is_causal, and K/V are repeated for GQA, which adds two K/V-sized
    tensors per layer that the real run does not have. The harness never packs, so it says so.
    """
    from transformers import masking_utils
    original = masking_utils.find_packed_sequence_indices
    masking_utils.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        masking_utils.find_packed_sequence_indices = original

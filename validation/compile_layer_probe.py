#!/usr/bin/env python3
"""What one Hugging Face decoder layer keeps for backward, eager vs torch.compile, on CPU.

The layer is transformers' LlamaDecoderLayer (Qwen2DecoderLayer with `--families llama,qwen2`; the
committed data is Llama only) in bf16 with random weights, SDPA attention, no mask (causal), no
checkpointing. Each case runs forward, then walks the autograd graph below the layer's output and
lists every tensor saved for backward (the `_saved_*` attributes of eager nodes, `saved_tensors` of
AOTAutograd's CompiledFunctionBackward), once per storage, classed as

- "param": a parameter's storage (weights are not activations);
- "rope": the cos/sin tables (shared by all layers, priced once);
- "input": the layer's input hidden states (the previous layer's output);
- "activation": anything else, what the layer itself makes and keeps.

Compiled runs compile the whole layer (`torch.compile(layer)`, as torchtune's compile_model and
HF's per-layer compile do); the joint graph is split by AOTAutograd's min-cut partitioner
(torch/_functorch/partitioners.py min_cut_rematerialization_partition), which decides what forward
saves and what backward recomputes.

Attention on CPU runs aten::_scaled_dot_product_flash_attention_for_cpu, which saves q, k, v, out
and logsumexp as CUDA's flash kernel does, but the CUDA efficient/flash kernels differ in
logsumexp padding and in which kernel is picked; trainmem keeps its CUDA attention terms and reads
only the other terms (norms, rotary, MLP, residual, LoRA) from this probe.

Cases: full fine-tune (every weight trains, input requires grad) and LoRA (frozen base, PEFT
adapters on q,v or on every linear, bf16 adapters as torchtune and litgpt build them, or fp32 as
PEFT's autocast_adapter_dtype keeps them), several (batch, seq, hidden, intermediate) shapes.

    python validation/compile_layer_probe.py --out validation/data/compile-layer-probe-torch2.5.1.json
"""
import argparse
import sys

import torch

from autograd_saved import graph_saved_tensors
from probe_output import cpu_provenance, write_json

SHAPES = [  # batch, seq, hidden, intermediate, heads, kv_heads
    (1, 64, 256, 704, 4, 2),
    (2, 64, 256, 704, 4, 2),
    (1, 64, 384, 1024, 6, 2),
]


def make_layer(family, hidden, inter, heads, kv_heads):
    if family == "llama":
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding
        cfg = LlamaConfig(hidden_size=hidden, intermediate_size=inter, num_attention_heads=heads,
                          num_key_value_heads=kv_heads, num_hidden_layers=1, vocab_size=128,
                          attn_implementation="sdpa")
        cfg._attn_implementation = "sdpa"
        return LlamaDecoderLayer(cfg, 0), LlamaRotaryEmbedding(config=cfg)
    from transformers import Qwen2Config
    from transformers.models.qwen2.modeling_qwen2 import Qwen2DecoderLayer, Qwen2RotaryEmbedding
    cfg = Qwen2Config(hidden_size=hidden, intermediate_size=inter, num_attention_heads=heads,
                      num_key_value_heads=kv_heads, num_hidden_layers=1, vocab_size=128,
                      attn_implementation="sdpa")
    cfg._attn_implementation = "sdpa"
    return Qwen2DecoderLayer(cfg, 0), Qwen2RotaryEmbedding(config=cfg)


def apply_method(layer, method, adapter_dtype):
    if method == "full":
        return layer
    from peft import LoraConfig, inject_adapter_in_model
    targets = {"lora_qv": ["q_proj", "v_proj"],
               "lora_all": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                            "down_proj"]}[method]
    for p in layer.parameters():
        p.requires_grad_(False)
    layer = inject_adapter_in_model(LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                                               target_modules=targets), layer)
    for n, p in layer.named_parameters():
        if "lora_" in n:
            p.data = p.data.to(adapter_dtype)
            if "lora_B" in n:
                torch.nn.init.normal_(p, std=0.02)
    return layer


def named_intermediates(layer, x, kwargs):
    """The layer's module inputs and outputs on an eager forward, by name ("mlp.up_proj:out")."""
    found, hooks = {}, []
    for name, mod in layer.named_modules():
        if not name or list(mod.children()) and name not in ("mlp", "self_attn"):
            continue

        def hook(m, args, out, name=name):
            if args and isinstance(args[0], torch.Tensor):
                found[name + ":in"] = args[0].detach()
            o = out[0] if isinstance(out, tuple) else out
            if isinstance(o, torch.Tensor):
                found[name + ":out"] = o.detach()
        hooks.append(mod.register_forward_hook(hook))
    with torch.no_grad():
        layer(x, **kwargs)
    for h in hooks:
        h.remove()
    return found


def label(v, named):
    """The first named intermediate equal to v (same element count, bf16-close), else ""."""
    for name, t in named.items():
        if t.numel() != v.numel() or t.dtype != v.dtype:
            continue
        a, b = t.float().reshape(-1), v.detach().float().reshape(-1)
        if torch.allclose(a, b, rtol=2e-2, atol=2e-2):
            return name
    return ""


def saved(out, classes, named=None):
    """Every storage the graph below `out` saves: (class, node, attr, shape, dtype, bytes)."""
    res, seen = [], set()
    for node, name, v in graph_saved_tensors(out.grad_fn):
        ptr = v.untyped_storage().data_ptr()
        if ptr in seen or v.untyped_storage().nbytes() == 0:
            continue
        seen.add(ptr)
        res.append({"class": classes.get(ptr, "activation"), "node": type(node).__name__,
                    "matches": label(v, named) if named else "",
                    "attr": name, "shape": list(v.shape),
                    "dtype": str(v.dtype).replace("torch.", ""),
                    "bytes": v.untyped_storage().nbytes()})
    return res


def run(family, method, adapter_dtype, mode, shape, seed):
    b, s, h, inter, heads, kv = shape
    torch.manual_seed(seed)
    layer, rope = make_layer(family, h, inter, heads, kv)
    layer = layer.to(torch.bfloat16)
    layer = apply_method(layer, method, adapter_dtype)
    layer.train()
    # The input requires grad, as in every layer past the first (whose input is the embedding).
    x = torch.randn(b, s, h, dtype=torch.bfloat16, requires_grad=True)
    pos = torch.arange(s).unsqueeze(0).expand(b, s)
    cos, sin = rope(x, pos)
    cos, sin = cos.to(torch.bfloat16), sin.to(torch.bfloat16)
    fn = torch.compile(layer) if mode == "compiled" else layer
    kwargs = dict(position_ids=pos, position_embeddings=(cos, sin))
    fn(x, **kwargs)[0].float().sum().backward()  # compile and warm up
    layer.zero_grad(set_to_none=True)
    x.grad = None
    y = fn(x, **kwargs)[0]
    classes = {p.untyped_storage().data_ptr(): "param" for p in layer.parameters()}
    classes[cos.untyped_storage().data_ptr()] = "rope"
    classes[sin.untyped_storage().data_ptr()] = "rope"
    classes[x.untyped_storage().data_ptr()] = "input"
    named = named_intermediates(layer, x, kwargs)
    items = saved(y, classes, named)
    y.float().sum().backward()
    tokens = b * s
    act = sum(i["bytes"] for i in items if i["class"] == "activation")
    inp = sum(i["bytes"] for i in items if i["class"] == "input")
    return {"family": family, "method": method, "adapter_dtype": str(adapter_dtype)[6:],
            "mode": mode, "batch": b, "seq": s, "hidden": h, "intermediate": inter,
            "heads": heads, "kv_heads": kv, "head_dim": h // heads, "lora_rank": 8,
            "activation_bytes": act, "input_bytes": inp,
            "activation_bytes_per_token": act / tokens, "saved": items}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", default="llama")
    ap.add_argument("--methods", default="full,lora_qv,lora_all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    runs = []
    for family in a.families.split(","):
        for method in a.methods.split(","):
            dtypes = {"full": [torch.bfloat16], "lora_qv": [torch.bfloat16],
                      "lora_all": [torch.bfloat16, torch.float32]}[method]
            for dt in dtypes:
                for shape in SHAPES:
                    for mode in ("eager", "compiled"):
                        torch._dynamo.reset()
                        r = run(family, method, dt, mode, shape, a.seed)
                        print(family, method, r["adapter_dtype"], mode, shape,
                              r["activation_bytes_per_token"], r["input_bytes"], file=sys.stderr)
                        runs.append(r)
    import transformers
    doc = {"schema": "trainmem.compile-layer-probe/1",
           "what": "tensors one HF decoder layer (bf16, SDPA) saves for backward, eager vs "
                   "torch.compile (inductor, min-cut partitioner), on CPU",
           "runs": runs,
           "provenance": cpu_provenance("compile_layer_probe.py", argv,
                                        transformers=transformers.__version__,
                                        peft=__import__("peft").__version__)}
    write_json(doc, a.out)


if __name__ == "__main__":
    main(sys.argv[1:])

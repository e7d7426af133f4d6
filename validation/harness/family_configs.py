"""Tiny configs of every family trainmem prices or is about to price (issue 15), as data.

Each keeps what moves memory in the real model (GQA or MQA, head_dim larger than hidden/heads,
biases, norms and their count, soft-capping, sliding windows with a window shorter than the
longest measured sequence, QK norms, fused projections, MLA and MoE routing, the activation
function, the config's dropout probabilities, tied or untied heads) and shrinks width, depth and
vocabulary so a real CPU step takes seconds. The published configs they follow are named in
each comment; the width-related fields are scaled down, the rest is copied.
"""

_V = 8192  # vocabulary: vocab/hidden = 64 keeps the logits a realistic share of the peak

_LLAMA_LIKE = {
    "hidden_size": 128, "intermediate_size": 352, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "vocab_size": _V, "attention_dropout": 0.0, "hidden_act": "silu",
}


def _cfg(arch, model_type, base=None, **kw):
    d = dict(base if base is not None else _LLAMA_LIKE)
    d.update(architectures=[arch], model_type=model_type)
    d.update(kw)
    return d


SUPPORTED = {
    # Mistral-7B-v0.1: GQA 32/8, sliding window 4096 (here 64, so s128/s512 use it).
    "mistral-tiny": _cfg("MistralForCausalLM", "mistral", sliding_window=64),
    # Mixtral-8x7B: 8 experts top-2, no sliding window, router aux loss.
    "mixtral-tiny": _cfg("MixtralForCausalLM", "mixtral", intermediate_size=192,
                         num_local_experts=8, num_experts_per_tok=2, sliding_window=None,
                         router_aux_loss_coef=0.02, rope_theta=1000000.0),
    # Gemma-2-9B/2B: four RMSNorms per layer, head_dim 256 > hidden/heads, attention and final
    # logit soft-capping, alternating sliding (4096) and global layers, gelu_pytorch_tanh, tied.
    "gemma2-tiny": _cfg("Gemma2ForCausalLM", "gemma2", intermediate_size=512, head_dim=64,
                        query_pre_attn_scalar=64, hidden_activation="gelu_pytorch_tanh",
                        hidden_act="gelu_pytorch_tanh", final_logit_softcapping=30.0,
                        attn_logit_softcapping=50.0, sliding_window=64, rms_norm_eps=1e-6,
                        tie_word_embeddings=True),
    # Gemma-3 text (gemma3_text): QK norms, five sliding layers per global one (here 3:1 over 4
    # layers), a local RoPE base, no soft-capping, head_dim 256 > hidden/heads, tied.
    "gemma3-tiny": _cfg("Gemma3ForCausalLM", "gemma3_text", intermediate_size=512, head_dim=64,
                        query_pre_attn_scalar=64, hidden_activation="gelu_pytorch_tanh",
                        hidden_act="gelu_pytorch_tanh", sliding_window=64, rms_norm_eps=1e-6,
                        layer_types=["sliding_attention", "sliding_attention",
                                     "sliding_attention", "full_attention"],
                        rope_local_base_freq=10000.0, rope_theta=1000000.0,
                        final_logit_softcapping=None, attn_logit_softcapping=None,
                        tie_word_embeddings=True),
    # Phi-3-mini-4k: fused qkv_proj and gate_up_proj, MHA, sliding window 2047, dropouts 0.
    "phi3-tiny": _cfg("Phi3ForCausalLM", "phi3", num_key_value_heads=4, sliding_window=2047,
                      resid_pdrop=0.0, embd_pdrop=0.0, pad_token_id=None),
    # GPT-2 (124M): LayerNorm with bias, learned positions, Conv1D with biases, gelu_new, tied
    # head, dropout 0.1 on attention probabilities, residual branches and embeddings.
    "gpt2-tiny": {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 128,
                  "n_layer": 4, "n_head": 4, "n_positions": 1024, "n_inner": None,
                  "vocab_size": _V, "activation_function": "gelu_new", "attn_pdrop": 0.1,
                  "embd_pdrop": 0.1, "resid_pdrop": 0.1, "layer_norm_epsilon": 1e-5,
                  "tie_word_embeddings": True, "torch_dtype": "bfloat16"},
    # DeepSeek-V3: MLA with a q LoRA, first_k_dense_replace dense layers then MoE layers with a
    # shared expert, grouped top-k routing with a score-correction bias; no MTP (HF skips it).
    "deepseek_v3-tiny": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", intermediate_size=256,
                             moe_intermediate_size=64, num_key_value_heads=4,
                             n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=1,
                             first_k_dense_replace=1, n_group=2, topk_group=1,
                             routed_scaling_factor=2.5, norm_topk_prob=True, q_lora_rank=64,
                             kv_lora_rank=32, qk_nope_head_dim=32, qk_rope_head_dim=16,
                             v_head_dim=32, num_nextn_predict_layers=0, rope_scaling=None,
                             rms_norm_eps=1e-6),
}

# The dropout finding: the same GPT-2 with every dropout 0.
SUPPORTED["gpt2-nodrop-tiny"] = dict(SUPPORTED["gpt2-tiny"], attn_pdrop=0.0, embd_pdrop=0.0,
                                     resid_pdrop=0.0)

# Dropout on the residual branches and embeddings only: CPU SDPA keeps its flash kernel (attention
# dropout > 0 sends it to an fp32 math path that CUDA does not take), so these rows price the
# dropout masks and outputs without the kernel switch.
SUPPORTED["gpt2-residdrop-tiny"] = dict(SUPPORTED["gpt2-tiny"], attn_pdrop=0.0)

NEW = {
    # Phi-2 / Phi-1.5: parallel attention and MLP after one LayerNorm (with bias), partial
    # rotary (0.4), q/k/v/dense with biases, fc1/fc2 gelu_new, resid_pdrop 0.1, untied head with bias.
    "phi-tiny": {"architectures": ["PhiForCausalLM"], "model_type": "phi", "hidden_size": 128,
                 "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4,
                 "num_key_value_heads": 4, "max_position_embeddings": 2048,
                 "partial_rotary_factor": 0.4, "hidden_act": "gelu_new", "resid_pdrop": 0.1,
                 "embd_pdrop": 0.0, "attention_dropout": 0.0, "layer_norm_eps": 1e-5,
                 "qk_layernorm": False, "rope_theta": 10000.0, "tie_word_embeddings": False,
                 "vocab_size": _V, "torch_dtype": "bfloat16"},
    # Pythia / GPT-NeoX: fused query_key_value, parallel residual, rotary on 25 % of head_dim,
    # LayerNorms with bias, exact gelu, biases everywhere, untied embed_out.
    "gpt_neox-tiny": {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox",
                      "hidden_size": 128, "intermediate_size": 512, "num_hidden_layers": 4,
                      "num_attention_heads": 4, "max_position_embeddings": 2048,
                      "rotary_pct": 0.25, "rotary_emb_base": 10000, "use_parallel_residual": True,
                      "hidden_act": "gelu", "attention_bias": True, "hidden_dropout": 0.0,
                      "attention_dropout": 0.0, "layer_norm_eps": 1e-5,
                      "tie_word_embeddings": False, "vocab_size": _V, "torch_dtype": "bfloat16"},
    # OLMo-2-7B: post-norms (after attention and after MLP, no pre-norm), full-width q/k RMSNorm,
    # MHA, untied.
    "olmo2-tiny": _cfg("Olmo2ForCausalLM", "olmo2", num_key_value_heads=4, rms_norm_eps=1e-6,
                       rope_theta=500000.0),
    # Gemma-2B: MQA (1 KV head), head_dim 256 > hidden/heads, gelu_pytorch_tanh, (1 + w) RMSNorm,
    # tied, embeddings scaled by sqrt(hidden).
    "gemma-tiny": _cfg("GemmaForCausalLM", "gemma", intermediate_size=512, num_key_value_heads=1,
                       head_dim=64, hidden_act="gelu_pytorch_tanh",
                       hidden_activation="gelu_pytorch_tanh", rms_norm_eps=1e-6,
                       tie_word_embeddings=True),
    # Granite-3.x: Llama layout with embedding/residual/attention/logit multipliers, tied.
    "granite-tiny": _cfg("GraniteForCausalLM", "granite", embedding_multiplier=12.0,
                         residual_multiplier=0.22, attention_multiplier=0.0078125,
                         logits_scaling=8.0, tie_word_embeddings=True),
    # StarCoder2-3B: LayerNorm with bias, biases everywhere, c_fc/c_proj gelu_pytorch_tanh MLP,
    # GQA, sliding window 4096, dropout 0.1 on attention, residual and embeddings, tied.
    "starcoder2-tiny": {"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2",
                        "hidden_size": 128, "intermediate_size": 512, "num_hidden_layers": 4,
                        "num_attention_heads": 4, "num_key_value_heads": 2,
                        "max_position_embeddings": 4096, "sliding_window": 4096,
                        "hidden_act": "gelu_pytorch_tanh", "use_bias": True, "norm_epsilon": 1e-5,
                        "attention_dropout": 0.1, "residual_dropout": 0.1,
                        "embedding_dropout": 0.1, "rope_theta": 999999.4420358813,
                        "tie_word_embeddings": True, "vocab_size": _V, "torch_dtype": "bfloat16"},
    # Falcon (new decoder architecture, Falcon-40B/180B and Falcon-7B's successor layout):
    # fused query_key_value with GQA, two LayerNorms in parallel (ln_attn, ln_mlp), parallel
    # attention and MLP, no biases, exact gelu, tied.
    "falcon-tiny": {"architectures": ["FalconForCausalLM"], "model_type": "falcon",
                    "hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
                    "num_kv_heads": 2, "new_decoder_architecture": True, "parallel_attn": True,
                    "num_ln_in_parallel_attn": 2, "bias": False, "alibi": False,
                    "multi_query": False, "ffn_hidden_size": 512, "hidden_dropout": 0.0,
                    "attention_dropout": 0.0, "layer_norm_epsilon": 1e-5,
                    "max_position_embeddings": 2048, "rope_theta": 10000.0,
                    "tie_word_embeddings": True, "vocab_size": _V, "torch_dtype": "bfloat16"},
    # Command-R (cohere): one LayerNorm (no bias) feeding parallel attention and MLP, logit
    # scale, tied.
    "cohere-tiny": _cfg("CohereForCausalLM", "cohere", layer_norm_eps=1e-5, logit_scale=0.0625,
                        use_qk_norm=False, tie_word_embeddings=True),
    # Command-R7B / Command-A (cohere2): Cohere's parallel block and norm, sliding-window
    # attention on three layers of four (sliding_window_pattern 4, as the published configs
    # write it; window 4096, here 64), RoPE on the sliding layers only, tied.
    "cohere2-tiny": _cfg("Cohere2ForCausalLM", "cohere2", layer_norm_eps=1e-5, logit_scale=0.25,
                         sliding_window=64, sliding_window_pattern=4, tie_word_embeddings=True),
    # gpt-oss-20b/120b: attention with a learned sink per head (eager only: transformers has no
    # SDPA path for sinks), q/k/v/o biases, alternating sliding (128, here 64) and full layers,
    # routed experts with biases and the clamped SwiGLU (swiglu_limit 7, alpha 1.702), a router
    # with bias, softmax over the top-k; untied.
    "gpt_oss-tiny": _cfg("GptOssForCausalLM", "gpt_oss", intermediate_size=64, head_dim=32,
                         num_local_experts=8, num_experts_per_tok=2, sliding_window=64,
                         attention_bias=True, swiglu_limit=7.0, swiglu_alpha=1.702,
                         router_aux_loss_coef=0.001, output_router_logits=False,
                         rope_theta=150000.0),
    # Qwen1.5-MoE-A2.7B / Qwen2-57B-A14B: qkv biases, routed experts plus one shared expert
    # behind a sigmoid gate, no top-k renormalisation.
    "qwen2_moe-tiny": _cfg("Qwen2MoeForCausalLM", "qwen2_moe", moe_intermediate_size=64,
                           shared_expert_intermediate_size=256, num_experts=8,
                           num_experts_per_tok=2, norm_topk_prob=False, decoder_sparse_step=1,
                           mlp_only_layers=[], router_aux_loss_coef=0.001,
                           use_sliding_window=False, max_window_layers=4, rms_norm_eps=1e-6,
                           rope_theta=1000000.0),
    # DeepSeek-V2-Lite: MLA without a q LoRA (q_proj), a first dense layer, routed + 2 shared
    # experts, greedy top-k.
    "deepseek_v2-tiny": _cfg("DeepseekV2ForCausalLM", "deepseek_v2", intermediate_size=256,
                             moe_intermediate_size=64, num_key_value_heads=4,
                             n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=2,
                             first_k_dense_replace=1, topk_method="greedy", n_group=1,
                             topk_group=1, routed_scaling_factor=1.0, norm_topk_prob=False,
                             q_lora_rank=None, kv_lora_rank=32, qk_nope_head_dim=32,
                             qk_rope_head_dim=16, v_head_dim=32, rope_scaling=None,
                             rms_norm_eps=1e-6),
}

FAMILY_TINY = dict(SUPPORTED, **NEW)

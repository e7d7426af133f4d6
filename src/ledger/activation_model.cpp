// The activation model: one function per block of a decoder layer, each term with its source.
// Rules of autograd used throughout (research/accounting.md 2.1, PyTorch
// tools/autograd/gen_variable_type.py guard_for and derivatives.yaml):
//  - a Linear saves its input only when its weight requires grad;
//  - mul saves each operand only when the other one requires grad;
//  - pow saves its input, rsqrt its result, silu/gelu their input, softmax its output;
//  - dtype casts, views, add and mean save nothing; dropout saves a bool mask.
#include "ledger/activation_model.h"

#include <algorithm>
#include <string>

#include "model/dtype.h"
#include "model/model_spec.h"
#include "plan/framework.h"
#include "plan/method.h"
#include "plan/precision.h"
#include "util/checked.h"

namespace trainmem {
namespace {

constexpr const char* kLlama = "transformers models/llama/modeling_llama.py";
constexpr const char* kAutograd = "PyTorch tools/autograd/derivatives.yaml";
constexpr const char* kPeft = "peft tuners/lora/layer.py Linear.forward (_cast_input_dtype)";
constexpr const char* kBnbCtx = kBnbKeepsInputSource;
constexpr const char* kCompiled =
    "torch 2.5.1 _functorch/partitioners.py min_cut_rematerialization_partition; "
    "validation/data/compile-layer-probe-torch2.5.1.json";

bool has(RoleSet set, Role r) {
  return (set & role_bit(r)) != 0;
}

// The compiled rules cover the layer the probe measured (a Llama decoder layer: pre-norm
// RMSNorm with a bf16 weight mul, dense SwiGLU MLP, no dropout, 16-bit without autocast); any
// other layer (Gemma's fp32-weight norm, sandwich or parallel blocks, MoE, MLA, autocast) stays
// eager under compile.
bool compiled_layer_probed(const ModelSpec& spec, const LayerPlan& l,
                           const ActivationSettings& cfg) {
  return !cfg.autocast && spec.norm == NormKind::rms_norm && !spec.parallel_block &&
         spec.norm_placement == NormPlacement::pre && !spec.mla && !is_moe_layer(spec, l.layer) &&
         spec.mlp == MlpKind::gated && spec.activation == Activation::silu &&
         spec.hidden_dropout <= 0 && cfg.lora_dropout <= 0 && !cfg.dora;
}

struct Sink {
  std::vector<ActivationTerm>& out;
  // When set: the linears whose matmul input does not require grad (layer_terms).
  RoleSet* no_grad_inputs = nullptr;
  void linear_input(RoleSet roles, bool requires_grad) {
    if (no_grad_inputs != nullptr && !requires_grad) *no_grad_inputs |= roles;
  }
  void token(std::string name, std::int64_t bytes, const char* source) {
    if (bytes > 0)
      out.push_back({.name = std::move(name), .bytes_per_token = bytes, .source = source});
  }
  void score(std::string name, std::int64_t bytes, const char* source) {
    if (bytes > 0)
      out.push_back({.name = std::move(name), .bytes_per_score = bytes, .source = source});
  }
  void pair(std::string name, std::int64_t bytes, const char* source) {
    if (bytes > 0)
      out.push_back({.name = std::move(name), .bytes_per_pair = bytes, .source = source});
  }
  void fixed(std::string name, std::int64_t bytes, const char* source) {
    if (bytes > 0) out.push_back({.name = std::move(name), .source = source, .bytes_fixed = bytes});
  }
  // A per-token tensor the graph holds until it is freed (ActivationTerm::held_by_graph).
  void held(std::string name, std::int64_t bytes, const char* source) {
    if (bytes > 0)
      out.push_back({.name = std::move(name),
                     .bytes_per_token = bytes,
                     .source = source,
                     .held_by_graph = true});
  }
  // A per-token tensor in the model output's DynamicCache (ActivationTerm::output_cache): held
  // past backward when the loop keeps the output, else only until the loss returns.
  void cached(std::string name, std::int64_t bytes, const char* source,
              const ActivationSettings& cfg) {
    if (bytes > 0 && cfg.output_cache != OutputCache::none)
      out.push_back({.name = std::move(name),
                     .bytes_per_token = bytes,
                     .source = source,
                     .held_by_graph = cfg.output_cache == OutputCache::kept,
                     .output_cache = true});
  }
};

constexpr const char* kOutputCacheSrc =
    "transformers cache_utils.py DynamicLayer.update (use_cache: the model output's "
    "DynamicCache)";

// The layer's key and value states in the output's DynamicCache as tensors of their own, beside
// whatever the attention saves (repeat_kv copies, the math kernel's fp32 copies, or nothing).
void output_cache_terms(Sink& s, const ModelSpec& spec, const ActivationSettings& cfg) {
  s.cached("DynamicCache: key and value states (model output)", kv_cache_bytes_per_token(spec, cfg),
           kOutputCacheSrc, cfg);
}

// A norm over `width` features per token, normalising `rows` rows of them (1 for a hidden-state
// norm; heads for a per-head q/k norm). Returns whether its output requires grad.
//  rms_norm (LlamaRMSNorm): x.to(fp32); pow saves the fp32 copy, rsqrt its result (rstd);
//    weight * x_norm.to(input dtype) saves x_norm when the weight trains.
//  rms_norm_fp32 (GemmaRMSNorm PR #29402, Olmo2RMSNorm, litgpt's RMSNorm): the weight multiplies
//  the fp32 x_norm,
//    so the saved x_norm is fp32.
//  layer_norm (nn.LayerNorm): native_layer_norm saves its input, mean and rstd (fp32 per row);
//    `input_kept`: another op already saves that same input tensor (the other norm of a parallel
//    block with two), so only mean and rstd are new. The other kinds save fp32 copies of their
//    own, so it does not apply to them.
//  mean_centered (CohereLayerNorm): x - mean is computed twice, once for pow (saved) and once for
//    the rstd mul (saved), both fp32; the fp32 weight mul saves the fp32 result.
bool norm_terms(Sink& s, const ModelSpec& spec, const std::string& what, std::int64_t width,
                std::int64_t rows, bool input_rg, bool trainable, const ActivationSettings& cfg,
                bool input_kept = false) {
  constexpr const char* kGemmaNorm =
      "transformers models/gemma/modeling_gemma.py GemmaRMSNorm; olmo2 Olmo2RMSNorm; litgpt "
      "model.py RMSNorm";
  constexpr const char* kCohereNorm =
      "transformers models/cohere/modeling_cohere.py CohereLayerNorm";
  switch (spec.norm) {
    case NormKind::layer_norm:
      if (input_rg || trainable) {
        // Three tensors (the caching allocator places each: mean and rstd are small requests).
        constexpr const char* kLayerNorm = "PyTorch derivatives.yaml native_layer_norm";
        if (!input_kept) {
          s.token(what + ": input (native_layer_norm)", cfg.stream_bytes * width, kLayerNorm);
        }
        s.token(what + ": mean (native_layer_norm)", 4 * rows, kLayerNorm);
        s.token(what + ": rstd (native_layer_norm)", 4 * rows, kLayerNorm);
      }
      return input_rg || trainable;
    case NormKind::mean_centered:
      if (input_rg) {
        s.token(what + ": fp32 centred copy (pow)", 4 * width, kCohereNorm);
        s.token(what + ": fp32 centred copy (rstd mul)", 4 * width, kCohereNorm);
        s.token(what + ": rstd", 4 * rows, kCohereNorm);
      }
      if (trainable)
        s.token(what + ": normalized tensor, fp32 (weight mul)", 4 * width, kCohereNorm);
      return input_rg || trainable;
    case NormKind::rms_norm:
    case NormKind::rms_norm_fp32: {
      const bool fp32_mul = spec.norm == NormKind::rms_norm_fp32;
      if (cfg.compiled_layers) {
        // The min-cut partitioner recomputes the pointwise fp32 cast, x * rstd and the weight mul
        // in backward; it keeps the input in its own dtype (a placeholder, or rebuilt from the
        // residual's saved addends) and rstd (a reduction 4x smaller than its input is never
        // recomputed: partitioners.py should_ban_recomputation, ban_if_reduction).
        if (input_rg || trainable) {
          s.token(what + ": input in its own dtype (compiled)", cfg.stream_bytes * width,
                  kCompiled);
          s.token(what + ": rstd (compiled)", 4 * rows, kCompiled);
        }
        return input_rg || trainable;
      }
      if (input_rg) {
        // Two tensors (the caching allocator places them apart: rstd is a small-pool request).
        s.token(what + ": fp32 copy of the input (pow)", 4 * width, fp32_mul ? kGemmaNorm : kLlama);
        s.token(what + ": rstd (rsqrt)", 4 * rows, fp32_mul ? kGemmaNorm : kLlama);
      }
      if (trainable) {
        s.token(what + ": normalized tensor (weight mul)",
                (fp32_mul ? 4 : cfg.stream_bytes) * width, fp32_mul ? kGemmaNorm : kLlama);
      }
      return input_rg || trainable;
    }
  }
  return input_rg || trainable;
}

// Linears that read one tensor of `width` features held in `in_bytes` per element.
// `already_saved`: another op keeps this exact tensor (e.g. SDPA's output feeds o_proj).
// Returns whether the input tensor itself is now saved (so a later reader adds nothing).
// `input_rg`: the input requires grad (else a LoRA dropout is not recorded and keeps no mask).
bool linear_inputs(Sink& s, const std::string& what, std::int64_t width, int in_bytes,
                   int trainable, int adapted, bool already_saved, const ActivationSettings& cfg,
                   bool input_rg = true) {
  bool shared_saved = already_saved;
  if (trainable > 0) {
    if (cfg.autocast && in_bytes == 4) {
      // autocast re-casts an fp32 activation at every use; only leaf weights are cached
      // (aten/src/ATen/autocast_mode.cpp cached_cast), so each linear saves its own bf16 copy.
      s.token(what + ": bf16 autocast copy per trainable linear", 2 * width * trainable,
              "PyTorch aten/src/ATen/autocast_mode.cpp cached_cast");
    } else if (!shared_saved) {
      s.token(what + ": linear input (weight trains)", in_bytes * width, kAutograd);
      shared_saved = true;
    }
  }
  if (cfg.bnb_saves_input && !shared_saved) {
    // bitsandbytes < 0.43.2 MatMul4Bit.forward keeps its input A in ctx.tensors whenever the input
    // requires grad, though the 4-bit weight gets no gradient; the linears reading one tensor
    // share it (Linear4bit's cast to the compute dtype is a no-op in bf16). ctx.tensors is a plain
    // attribute, not save_for_backward, so backward does not release it: it lives as long as the
    // graph (held_by_graph).
    s.held(what + ": input kept by bitsandbytes MatMul4Bit (< 0.43.2)", in_bytes * width, kBnbCtx);
    shared_saved = true;
  }
  if (adapted == 0 || cfg.lora_rank == 0) return shared_saved;
  const std::int64_t r = cfg.lora_rank;
  const bool dropout = cfg.lora_dropout > 0;
  if (dropout && input_rg) {
    // lora_dropout(x) runs on the input already cast to the adapter dtype (peft layer.py);
    // autograd records it (and keeps its mask) only when the input requires grad.
    s.token(what + ": LoRA dropout mask per adapter",
            dropout_mask_bytes(cfg, cfg.adapter_bytes) * width * adapted, kPeft);
  }
  if (cfg.autocast) {
    // x.to(fp32 adapter) then lora_A under autocast casts to bf16: one bf16 copy per module.
    s.token(what + ": LoRA bf16 autocast copy of the input per adapter", 2 * width * adapted,
            kPeft);
    s.token(what + ": LoRA A output per adapter", 2 * r * adapted, kPeft);
    return shared_saved;
  }
  if (cfg.compiled_layers && cfg.adapter_bytes != in_bytes && !dropout) {
    // Compiled: the partitioner's graph has one cast of the shared input (common subexpressions
    // are merged), saved once for every adapter reading it (the probe's fp32 adapters).
    s.token(what + ": LoRA input cast to the adapter dtype, one copy shared (compiled)",
            static_cast<std::int64_t>(cfg.adapter_bytes) * width, kCompiled);
  } else if (cfg.adapter_bytes != in_bytes || dropout) {
    // One cast (or dropped) copy per adapted module: q, k and v each hold their own.
    s.token(what + ": LoRA input cast to the adapter dtype per adapter",
            static_cast<std::int64_t>(cfg.adapter_bytes) * width * adapted, kPeft);
  } else if (!shared_saved) {
    s.token(what + ": LoRA A input (the shared input itself)", in_bytes * width, kPeft);
    shared_saved = true;
  }
  s.token(what + ": LoRA A output per adapter",
          static_cast<std::int64_t>(cfg.adapter_bytes) * r * adapted, kPeft);
  return shared_saved;
}

// litgpt's LoRAQKVLinear (litgpt 0.4.13 lora.py; lit-gpt 8641822 the same): one lora_A of
// r x (adapted q/k/v) outputs, whose output the grouped conv1d of lora_B saves (linear_inputs
// priced r of it), and, unless all three are adapted (zero_pad returns its input then),
// zero_pad's out-of-place index_copy into the fused q/k/v width, which keeps its source,
// lora_B's output, for backward (derivatives.yaml index_copy: the source's shape). Both in the
// adapters' dtype, bf16 under autocast. Measured on CPU with litgpt's own GPT-NeoX layer
// (saved tensors: IndexCopyBackward0 source, ConvolutionBackward0 input).
void litgpt_qkv_lora_terms(Sink& s, const ModelSpec& spec, const ActivationSettings& cfg) {
  constexpr const char* kLitLora = "litgpt lora.py LoRAQKVLinear (conv1d lora_B, zero_pad)";
  const int adapted = (cfg.lora_q ? 1 : 0) + (cfg.lora_k ? 1 : 0) + (cfg.lora_v ? 1 : 0);
  if (adapted == 0) return;
  const std::int64_t bytes = cfg.autocast ? 2 : cfg.adapter_bytes;
  const std::int64_t kv_width = spec.kv_heads * spec.head_dim;
  const std::int64_t width = (cfg.lora_q ? spec.heads * spec.head_dim : 0) +
                             (cfg.lora_k ? kv_width : 0) + (cfg.lora_v ? kv_width : 0);
  if (adapted > 1) {
    s.token("litgpt LoRA A output of the other adapted q/k/v (conv1d input)",
            bytes * cfg.lora_rank * (adapted - 1), kLitLora);
  }
  if (adapted < 3) {
    s.token("litgpt LoRA B output of the adapted q/k/v (zero_pad index_copy source)", bytes * width,
            kLitLora);
  }
}

int count(RoleSet set, std::initializer_list<Role> roles) {
  int n = 0;
  for (Role r : roles) n += has(set, r) ? 1 : 0;
  return n;
}

// Softmax of eager attention: fp32 probabilities (4 B/score) and, in bf16, the copy the PV
// matmul saves; with dropout a mask plus the dropped copy (accounting.md 2.3). Gemma 2's
// attn_logit_softcapping adds tanh's saved output; Falcon's softmax runs in the hidden dtype
// and the PV matmul saves that same tensor.
void eager_scores(Sink& s, const ModelSpec& spec, const ActivationSettings& cfg) {
  const char* src = "transformers eager_attention_forward; aten SoftMax.cpp (fp32 softmax)";
  const int e = cfg.compute_bytes;
  if (spec.attn_softcap > 0) {
    s.score("eager: soft-cap tanh output", e,
            "transformers models/gemma2/modeling_gemma2.py eager_attention_forward (softcap)");
  }
  // GPT-2's and Falcon's eager softmax runs in the hidden dtype (no dtype=torch.float32), but
  // under autocast the scores reach it in fp32: CUDA autocast runs softmax in fp32
  // (autocast_mode.cpp, softmax in the fp32 list), and on CPU the additive mask, built in the
  // fp32 weights' dtype, promotes the bf16 scores (measured: held-out draw 3).
  const int soft = spec.eager_softmax_fp32 || cfg.autocast ? 4 : e;
  s.score(soft == 4 ? "eager: softmax probabilities, fp32"
                    : "eager: softmax probabilities in the hidden dtype",
          soft, src);
  if (spec.attention_sinks) {
    // gpt-oss: cat([scores, sinks]) - max(dim=-1) then softmax: the softmax output has one more
    // column per row, and max keeps its int64 indices (modeling_gpt_oss.py
    // eager_attention_forward).
    constexpr const char* kSinks =
        "transformers models/gpt_oss/modeling_gpt_oss.py eager_attention_forward (sinks)";
    s.token("eager: the sink column of the softmax output", soft * spec.heads, kSinks);
    s.token("eager: row max indices, int64", 8 * spec.heads, kSinks);
  }
  if (spec.attention_dropout > 0) {
    s.score("eager: attention dropout mask", dropout_mask_bytes(cfg, e), src);
    s.score("eager: dropped probabilities (PV matmul input)", e, src);
  } else if (soft != e) {
    s.score("eager: probabilities cast to the compute dtype (PV matmul input)", e, src);
  }
}

// SDPA's math kernel (aten/src/ATen/native/transformers/attention.cpp
// _scaled_dot_product_attention_math): q, k and v are upcast to fp32 when half/bf16, q and k are
// each scaled by sqrt(scale) (both saved by the QK^T matmul, k expanded to all heads), the safe
// softmax saves its fp32 output, dropout saves its mask and the PV matmul saves the dropped
// probabilities and v (all heads). Its output is not saved; the o_proj input is a fresh copy.
void math_attention(Sink& s, const ModelSpec& spec, const LayerPlan& l, bool q_rg,
                    const ActivationSettings& cfg) {
  const char* src =
      "PyTorch aten native/transformers/attention.cpp _scaled_dot_product_attention_math";
  const std::int64_t a = spec.heads;
  const std::int64_t qk = qk_head_dim(spec);
  const std::int64_t vd = v_head_dim(spec);
  const int e = cfg.compute_bytes;
  if (!q_rg) return;
  s.token("SDPA math: q scaled, fp32", 4 * a * qk, src);
  s.token("SDPA math: k scaled and expanded to all heads, fp32", 4 * a * qk, src);
  // v is its own tensor in fp32 without GQA; otherwise the fp32 upcast or the expanded copy.
  s.token("SDPA math: v (fp32, all heads)", 4 * a * vd, src);
  s.score("SDPA math: softmax output, fp32", 4, src);
  if (spec.attention_dropout > 0) {
    s.score("SDPA math: attention dropout mask", dropout_mask_bytes(cfg, 4), src);
    s.score("SDPA math: dropped probabilities, fp32 (PV matmul input)", 4, src);
  }
  linear_inputs(s, "o_proj input", a * vd, e, count(l.trainable, {Role::o}),
                count(l.adapted, {Role::o}), false, cfg);
}

// SDPA receives a materialised mask: a padding mask, a model that always hands it one
// (ModelSpec::sdpa_mask_always), or a sliding window shorter than the sequence (masking_utils
// sliding-window mask; with seq <= window the mask is plain causal and dropped). transformers then
// repeats K/V itself (sdpa_attention.py use_gqa_in_sdpa needs no mask) and the bool mask becomes a
// float bias (convert_boolean_attn_mask).
bool sdpa_with_mask(const ModelSpec& spec, const LayerPlan& l, const ActivationSettings& cfg) {
  if (cfg.attention != Attention::sdpa) return false;
  return cfg.padding_mask || spec.sdpa_mask_always ||
         (is_sliding_layer(spec, l.layer) && cfg.seq > spec.sliding_window);
}

// What attention keeps for backward after the scores: eager's probabilities (and the o_proj input
// it makes with transpose + contiguous), or a fused kernel's output and logsumexp, whose output
// the o_proj input shares unless `output_copied` (q was heads-major, ModelSpec::q_heads_major:
// the o_proj input is the transpose's copy). `value_width` is heads x value head width.
void attention_output(Sink& s, const ModelSpec& spec, const LayerPlan& l, std::int64_t value_width,
                      const char* src, const ActivationSettings& cfg, bool output_copied) {
  const int e = cfg.compute_bytes;
  if (attention_kernel(spec, cfg) == AttentionKernel::eager) {
    eager_scores(s, spec, cfg);
    linear_inputs(s, "o_proj input", value_width, e, count(l.trainable, {Role::o}),
                  count(l.adapted, {Role::o}), false, cfg);
    return;
  }
  const bool shared = !output_copied;  // the o_proj input is the output itself
  if (cfg.bnb_saves_input && shared) {
    // The 4-bit o_proj keeps this same tensor in ctx.tensors (bitsandbytes < 0.43.2): the graph
    // holds it past the attention node's backward.
    s.held("attention output (shared with the o_proj input, kept by MatMul4Bit)", e * value_width,
           kBnbCtx);
  } else {
    s.token(shared ? "attention output (shared with the o_proj input)" : "attention output",
            e * value_width, src);
  }
  s.token("attention logsumexp, fp32", 4 * spec.heads, src);
  if (sdpa_with_mask(spec, l, cfg)) {
    s.pair("SDPA: float copy of the bool mask (padding or sliding window)", e,
           "PyTorch aten attention.cpp convert_boolean_attn_mask");
  }
  if (!shared) {
    linear_inputs(s, "o_proj input (transpose(1, 2).contiguous() copy of the output)", value_width,
                  e, count(l.trainable, {Role::o}), count(l.adapted, {Role::o}), false, cfg);
    return;
  }
  linear_inputs(s, "o_proj input", value_width, e, 0, count(l.adapted, {Role::o}), true, cfg);
}

// A q/k norm over `width` features per token in `rows` rows (per head or the whole projection).
// A norm that reads a projection's output (Qwen3's q/k norms, MLA's latent norms) sees the
// compute dtype, not the residual stream's: under autocast its input is bf16, so the tensor it
// normalises back to its input dtype (`self.weight * x.to(input_dtype)`) is bf16 too.
ActivationSettings reading_a_projection(const ActivationSettings& cfg) {
  ActivationSettings in_e = cfg;
  in_e.stream_bytes = cfg.compute_bytes;
  return in_e;
}

void qk_norm_terms(Sink& s, const ModelSpec& spec, const LayerPlan& l,
                   const ActivationSettings& cfg) {
  const std::int64_t d = spec.head_dim;
  const bool per_head = spec.qk_norm != QkNorm::full_width;
  const std::int64_t q_rows = per_head ? spec.heads : 1;
  const std::int64_t k_rows = per_head ? spec.kv_heads : 1;
  ActivationSettings in_e = reading_a_projection(cfg);
  in_e.compiled_layers = false;  // per-head q/k norms under compile were not probed
  norm_terms(s, spec, "q_norm", spec.heads * d, q_rows, true, has(l.trainable, Role::q_norm), in_e);
  norm_terms(s, spec, "k_norm", spec.kv_heads * d, k_rows, true, has(l.trainable, Role::k_norm),
             in_e);
}

struct AttentionResult {
  bool output_rg = false;    // the attention output requires grad
  bool input_saved = false;  // the attention input tensor itself is saved (shared with the MLP)
};

AttentionResult attention_terms(Sink& s, const ModelSpec& spec, const LayerPlan& l, bool in_rg,
                                const ActivationSettings& cfg) {
  const std::int64_t a = spec.heads;
  const int e = cfg.compute_bytes;
  const AttentionKernel kernel = attention_kernel(spec, cfg);
  if (spec.mla) {
    const MlaSpec& m = spec.mla_spec;
    const std::int64_t qk = qk_head_dim(spec);
    const std::int64_t vd = v_head_dim(spec);
    const bool direct_q = m.q_lora_rank == 0;
    const bool saved = linear_inputs(
        s, "MLA q_a/kv_a input", spec.hidden, cfg.stream_bytes,
        count(l.trainable, {direct_q ? Role::q : Role::q_a, Role::kv_a}),
        count(l.adapted, {direct_q ? Role::q : Role::q_a, Role::kv_a}), false, cfg, in_rg);
    const bool latent_t = has(l.trainable, Role::latent_norm);
    if (!direct_q) {
      const bool rg = in_rg || has(l.trainable, Role::q_a) || has(l.adapted, Role::q_a);
      norm_terms(s, spec, "q_a_layernorm", m.q_lora_rank, 1, rg, latent_t,
                 reading_a_projection(cfg));
      linear_inputs(s, "q_b_proj input", m.q_lora_rank, e, count(l.trainable, {Role::q_b}),
                    count(l.adapted, {Role::q_b}), false, cfg);
    }
    const bool kv_rg = in_rg || has(l.trainable, Role::kv_a) || has(l.adapted, Role::kv_a);
    norm_terms(s, spec, "kv_a_layernorm", m.kv_lora_rank, 1, kv_rg, latent_t,
               reading_a_projection(cfg));
    linear_inputs(s, "kv_b_proj input", m.kv_lora_rank, e, count(l.trainable, {Role::kv_b}),
                  count(l.adapted, {Role::kv_b}), false, cfg);
    const char* src = "transformers models/deepseek_v3/modeling_deepseek_v3.py";
    const RoleSet mla_roles = role_bit(Role::q) | role_bit(Role::q_a) | role_bit(Role::q_b) |
                              role_bit(Role::kv_a) | role_bit(Role::kv_b) |
                              role_bit(Role::latent_norm);
    // A frozen layer whose input does not require grad records nothing past its projections.
    if (!in_rg && !(l.trainable & mla_roles) && !(l.adapted & mla_roles)) {
      output_cache_terms(s, spec, cfg);
      return {false, saved};
    }
    // v is a view of kv_b's output; a fused kernel saves it (keeping the whole output), the math
    // kernel in bf16 saves its fp32 upcast instead.
    if (kernel != AttentionKernel::math || e == 4) {
      s.token("MLA: kv_b output kept alive by the v view", e * a * (m.qk_nope_head_dim + vd), src);
    }
    if (kernel == AttentionKernel::math) {
      math_attention(s, spec, l, true, cfg);
    } else {
      s.token("MLA: full-head q (nope + rope)", e * a * qk, src);
      s.token("MLA: full-head k (nope + rope)", e * a * qk, src);
      attention_output(s, spec, l, a * vd, src, cfg, false);
    }
    output_cache_terms(s, spec, cfg);  // MLA: priced as tensors of their own
    return {true, saved};
  }
  const std::int64_t d = spec.head_dim;
  const std::int64_t kv = spec.kv_heads;
  const RoleSet qkv_roles = role_bit(Role::q) | role_bit(Role::k) | role_bit(Role::v);
  const bool fused = spec.fused_qkv;
  const int t_in =
      fused ? count(l.trainable, {Role::qkv}) : count(l.trainable, {Role::q, Role::k, Role::v});
  int ad_in = fused ? count(l.adapted, {Role::qkv}) : count(l.adapted, {Role::q, Role::k, Role::v});
  // litgpt's LoRAQKVLinear adapts q, k and v through one lora_A on one (dropped) input.
  if (cfg.fused_qkv_attention) ad_in = std::min(ad_in, 1);
  const bool saved = linear_inputs(s, "q/k/v input (norm output)", spec.hidden, cfg.stream_bytes,
                                   t_in, ad_in, false, cfg, in_rg);
  s.linear_input(qkv_roles | role_bit(Role::qkv), in_rg);
  if (cfg.fused_qkv_attention && ad_in > 0) litgpt_qkv_lora_terms(s, spec, cfg);
  const bool q_rg = in_rg || (l.trainable & qkv_roles) || (l.adapted & qkv_roles) ||
                    has(l.trainable, Role::qkv) || has(l.adapted, Role::qkv);
  s.linear_input(role_bit(Role::o), q_rg);  // o_proj reads the attention output
  if (!q_rg) {
    output_cache_terms(s, spec, cfg);
    return {false, saved};
  }
  if (spec.qk_norm != QkNorm::none) qk_norm_terms(s, spec, l, cfg);
  // Rotary (q * cos + rotate_half(q) * sin) saves only cos/sin, shared by all layers; partial
  // rotary slices and concatenates (views and cat save nothing).
  if (kernel == AttentionKernel::math) {
    math_attention(s, spec, l, q_rg, cfg);
    output_cache_terms(s, spec, cfg);
    return {true, saved};
  }
  const bool eager = kernel == AttentionKernel::eager;
  const bool repeat = eager || sdpa_with_mask(spec, l, cfg) || spec.kv_all_heads;
  const std::int64_t kv_saved = repeat ? a : kv;
  const char* src = eager ? "transformers eager_attention_forward (repeat_kv)"
                          : "transformers integrations/sdpa_attention.py; flash backward "
                            "signature (q, k, v, out, logsumexp)";
  s.token("attention: q after rotary", e * a * d, src);
  if (cfg.fused_qkv_attention && cfg.attention != Attention::eager) {
    // litgpt CausalSelfAttention: k, v expanded to every head when kv < heads, then reshaped to
    // (B, heads, T, hs). Under several groups the reshape merges a real stride with the expand's
    // zero stride and copies; under one group (multi-query) and under multi-head it is a view, so
    // SDPA's saved v keeps the fused qkv output whole (a CPU saved-tensor dump of the scaled
    // TinyLlama, one group: v's storage is the (B, T, (heads + 2) x hs) qkv output). k is new
    // after rotary either way.
    const char* lit = "litgpt model.py CausalSelfAttention.forward (qkv split, expand, SDPA)";
    s.token("attention: k after rotary, every head (litgpt)", e * a * d, lit);
    if (kv < a && kv > 1) {
      s.token("attention: v expanded to every head (litgpt)", e * a * d, lit);
    } else {
      s.token("attention: fused qkv output kept by the v view (litgpt)", e * (a + 2 * kv) * d, lit);
    }
    // litgpt builds its own attention: whether its SDPA output reaches proj as a copy has not
    // been traced, so the output is priced as proj's input (docs/accuracy.md, litgpt).
    attention_output(s, spec, l, a * d, src, cfg, false);
    return {true, saved};
  }
  // v is a view of the fused projection's output in Phi-3 (qkv_proj) and GPT-NeoX
  // (query_key_value; slices and chunk are views; q and k are new after rotary), so a saved v
  // keeps the whole (heads + 2 kv heads) x head_dim output alive, unless the output's cache
  // copies the states (transformers 5): the attention then reads the cache's copy.
  const bool cache_on = cfg.output_cache != OutputCache::none;
  const bool unrepeated = !repeat || kv == a;  // repeat_kv(x, 1) returns x
  // Eager's `torch.matmul(attn_weights, value_states)` reshapes v to (batch x heads, T, d) for
  // bmm: the strided view of the fused output merges into that shape only when the batch is 1;
  // past it the reshape copies and the copy is saved, not the fused output (CPU storages of
  // phi3-tiny eager steps: at 2 x 128 an h-wide v copy a layer and no qkv output, +1.0 % while
  // priced as the view; at 1 x 512 the qkv output kept).
  const bool fused_view = spec.fused_qkv_view && unrepeated && (!eager || cfg.batch == 1);
  const bool view_copied = fused_view && cache_on && cfg.cache_copies_states;
  const char* k_name =
      repeat ? "attention: k repeated to all heads (repeat_kv)" : "attention: k (GQA heads)";
  const char* v_name = view_copied  ? "attention: v, the output cache's copy of the fused view"
                       : fused_view ? "attention: v, a view keeping the fused qkv output"
                       : repeat     ? "attention: v repeated to all heads (repeat_kv)"
                                    : "attention: v (GQA heads)";
  const std::int64_t k_bytes = e * kv_saved * d;
  const std::int64_t v_bytes = fused_view && !view_copied ? e * (a + 2 * kv) * d : k_bytes;
  // The attention saves the output cache's own k and v unless repeat_kv copied them to every
  // head; then the cache's are tensors of their own. Shared ones are held with the output when
  // the loop keeps it (CPU probe: validation/data/kv-cache-probe.json).
  if (cache_on && unrepeated && cfg.output_cache == OutputCache::kept) {
    s.cached(std::string(k_name) + ", held by the output's DynamicCache", k_bytes, kOutputCacheSrc,
             cfg);
    s.cached(std::string(v_name) + ", held by the output's DynamicCache", v_bytes, kOutputCacheSrc,
             cfg);
    attention_output(s, spec, l, a * d, src, cfg, spec.q_heads_major);
    return {true, saved};
  }
  if (cache_on && !unrepeated) output_cache_terms(s, spec, cfg);
  s.token(k_name, k_bytes, src);
  s.token(v_name, v_bytes, src);
  attention_output(s, spec, l, a * d, src, cfg, spec.q_heads_major);
  return {true, saved};
}

// Gated MLP down(act(gate(x)) * up(x)) of width `width`, `copies` times per token (top-k routed
// copies for experts). LlamaMLP.forward: act saves its intermediates of g, the mul saves act(g)
// and u, down_proj saves the product when its weight trains. The input is counted by the caller.
void gated_mlp(Sink& s, const ModelSpec& spec, const std::string& what, std::int64_t width,
               std::int64_t copies, bool in_rg, RoleSet trainable, bool adapted_all,
               RoleSet adapted, int e, const ActivationSettings& cfg) {
  const bool compiled = cfg.compiled_layers;  // false for MoE layers (compiled_layer_probed)
  const bool t_gate = has(trainable, Role::gate) || has(trainable, Role::gate_up);
  const bool t_up = has(trainable, Role::up) || has(trainable, Role::gate_up);
  const bool ad_gate = adapted_all || has(adapted, Role::gate) || has(adapted, Role::gate_up);
  const bool ad_up = adapted_all || has(adapted, Role::up) || has(adapted, Role::gate_up);
  const bool g_rg = in_rg || t_gate || ad_gate;
  const bool u_rg = in_rg || t_up || ad_up;
  const std::int64_t act_saved = activation_saved_tensors(spec.activation);
  if (compiled) {
    // Compiled: act(gate) and act(gate) * up are pointwise, recomputed in backward from the two
    // matmul outputs, which the partitioner keeps (mm is compute-intensive, never recomputed).
    // The gate output feeds act(gate) (needed by up's gradient) and act' (gate's); the up output
    // only gate's gradient.
    if (g_rg || u_rg) s.token(what + ": gate output (compiled)", copies * e * width, kCompiled);
    if (g_rg) s.token(what + ": up output (compiled)", copies * e * width, kCompiled);
  } else if (g_rg) {
    s.token(what + ": activation intermediates of the gate output", act_saved * copies * e * width,
            "transformers activations.py ACT2FN");
  }
  if (!compiled) {
    if (u_rg) s.token(what + ": act_fn(gate) (saved by the mul)", copies * e * width, kLlama);
    if (g_rg) s.token(what + ": up output (saved by the mul)", copies * e * width, kLlama);
  }
  const bool t_down = has(trainable, Role::down);
  const bool ad_down = adapted_all || has(adapted, Role::down);
  std::vector<ActivationTerm> tmp;
  Sink t{tmp};
  linear_inputs(t, what + ": down_proj input", width, e, t_down ? 1 : 0, ad_down ? 1 : 0, false,
                cfg);
  for (ActivationTerm& term : tmp) {
    term.bytes_per_token *= copies;
    s.out.push_back(term);
  }
}

// The MLP (dense, plain or mixture of experts) reading a tensor of `hidden` features that
// requires grad when `in_rg`; `input_saved`: that tensor is already saved by attention's linears
// (one norm shared by both branches of a parallel block).
void mlp_terms(Sink& s, const ModelSpec& spec, const LayerPlan& l, bool in_rg, bool input_saved,
               const ActivationSettings& cfg) {
  const std::int64_t h = spec.hidden;
  const int e = cfg.compute_bytes;
  if (is_moe_layer(spec, l.layer)) {
    const MoeSpec& m = spec.moe;
    const char* src =
        "transformers models/qwen3_moe/modeling_qwen3_moe.py, "
        "deepseek_v3/modeling_deepseek_v3.py";
    const bool t_router = has(l.trainable, Role::router);
    const int shared_t =
        m.shared_experts > 0 ? count(l.trainable_shared, {Role::gate, Role::up, Role::gate_up}) : 0;
    // Qwen2-MoE's shared_expert_gate is one more linear reading the input (its own bf16 copy
    // under autocast).
    const int gate_t = m.shared_expert_gate && (has(l.trainable, Role::shared_expert_gate) ||
                                                has(l.trainable_shared, Role::shared_expert_gate))
                           ? 1
                           : 0;
    linear_inputs(s, "router and shared-expert input", h, cfg.stream_bytes,
                  (t_router ? 1 : 0) + shared_t + gate_t, has(l.adapted, Role::router) ? 1 : 0,
                  input_saved, cfg, in_rg);
    const bool route_rg = in_rg || t_router;
    if (route_rg && m.softmax_after_topk) {
      // gpt-oss GptOssTopKRouter: topk keeps its int64 indices, the softmax over the k values
      // its output in the logits' dtype.
      s.token("router: top-k indices and the softmax over the top-k logits", (8 + e) * m.top_k,
              "transformers models/gpt_oss/modeling_gpt_oss.py");
    } else if (route_rg) {
      s.token("router softmax, fp32, and top-k weights/indices", 4 * m.experts + 12 * m.top_k, src);
    }
    // DeepseekV3TopkRouter runs F.linear(x.type(torch.float32), ...): a copy only when the stream
    // is not fp32 already (under autocast it is, and F.linear saves autocast's bf16 copy, priced
    // with the router's input above).
    if (spec.model_type.rfind("deepseek", 0) == 0 && t_router && cfg.stream_bytes < 4) {
      s.token("router: fp32 copy of the input", 4 * h, src);
    }
    // The routed experts run in expert_bytes, outside autocast unless they are nn.Linears.
    const int x = cfg.expert_bytes;
    ActivationSettings experts_cfg = cfg;
    experts_cfg.autocast = cfg.experts_autocast;
    const bool t_in = count(l.trainable_routed, {Role::gate, Role::up, Role::gate_up}) > 0;
    if (t_in) s.token("experts: gathered input per routed copy", m.top_k * x * h, src);
    if (l.adapted_experts) {
      linear_inputs(s, "experts gate/up input (per routed copy)", h * m.top_k, x, 0, 2, t_in,
                    experts_cfg);
    }
    gated_mlp(s, spec, "experts", m.expert_intermediate, m.top_k, in_rg, l.trainable_routed,
              l.adapted_experts, 0, x, experts_cfg);
    if (route_rg)
      s.token("experts: output per routed copy (routing-weight mul)", m.top_k * x * h, src);
    if (m.shared_experts > 0) {
      // shared_intermediate is already the whole shared MLP's width (n_shared x moe width).
      gated_mlp(s, spec, "shared experts", m.shared_intermediate, 1, in_rg, l.trainable_shared,
                false, l.adapted, e, cfg);
      if (m.shared_expert_gate) s.token("shared expert output (sigmoid-gate mul)", e * h, src);
    }
  } else if (spec.mlp == MlpKind::gated) {
    const bool fused_mlp = spec.fused_qkv && spec.fused_mlp;
    const int t_in = fused_mlp ? count(l.trainable, {Role::gate_up})
                               : count(l.trainable, {Role::gate, Role::up});
    const int ad_in =
        fused_mlp ? count(l.adapted, {Role::gate_up}) : count(l.adapted, {Role::gate, Role::up});
    linear_inputs(s, "gate/up input (norm output)", h, cfg.stream_bytes, t_in, ad_in, input_saved,
                  cfg, in_rg);
    s.linear_input(role_bit(Role::gate) | role_bit(Role::up) | role_bit(Role::gate_up), in_rg);
    s.linear_input(role_bit(Role::down), in_rg || t_in > 0 || ad_in > 0);
    gated_mlp(s, spec, "mlp", spec.intermediate, 1, in_rg, l.trainable, false, l.adapted,
              cfg.compute_bytes, cfg);
  } else {
    // Plain MLP: fc_in, the activation (its intermediates by ACT2FN: GPT-2/Phi's gelu_new saves
    // four, GPT-NeoX/Falcon's gelu and StarCoder2's gelu_pytorch_tanh one), fc_out.
    linear_inputs(s, "fc_in input (norm output)", h, cfg.stream_bytes,
                  count(l.trainable, {Role::up}), count(l.adapted, {Role::up}), input_saved, cfg,
                  in_rg);
    s.linear_input(role_bit(Role::up), in_rg);
    s.linear_input(role_bit(Role::down),
                   in_rg || has(l.trainable, Role::up) || has(l.adapted, Role::up));
    if (in_rg || has(l.trainable, Role::up) || has(l.adapted, Role::up)) {
      s.token("activation intermediates of the fc_in output",
              activation_saved_tensors(spec.activation) * e * spec.intermediate,
              "transformers activations.py ACT2FN");
    }
    linear_inputs(s, "fc_out input", spec.intermediate, e, count(l.trainable, {Role::down}),
                  count(l.adapted, {Role::down}), false, cfg);
  }
}

}  // namespace

bool input_require_grads_hooked(const TrainingPlan& plan) {
  const bool lora = plan.method == Method::lora || plan.method == Method::qlora;
  return plan.checkpointing == Checkpointing::full &&
         (lora || plan.behaviour.checkpointing_input_grads);
}

ActivationSettings activation_settings(const TrainingPlan& plan) {
  ActivationSettings cfg;
  cfg.attention = plan.attention;
  cfg.head_saves_input = plan.loss != Loss::chunked;
  const bool lora = plan.method == Method::lora || plan.method == Method::qlora;
  switch (plan.precision) {
    case Precision::fp32:
      cfg.stream_bytes = 4;
      cfg.compute_bytes = 4;
      break;
    case Precision::autocast_bf16:
    case Precision::autocast_fp16:
      cfg.autocast = true;
      cfg.stream_bytes = 4;
      cfg.compute_bytes = 2;
      break;
    case Precision::bf16_mixed:
    case Precision::bf16:
    case Precision::fp16_mixed:
      break;
  }
  if (plan.method == Method::qlora && plan.quant.prepare_kbit && !cfg.autocast) {
    // prepare_model_for_kbit_training upcasts norms to fp32 and Linear4bit returns its input's
    // dtype, so the whole layer runs in fp32 (accounting.md 7.4).
    cfg.stream_bytes = 4;
    cfg.compute_bytes = 4;
  }
  if (lora) {
    cfg.lora_rank = plan.lora.rank;
    cfg.lora_dropout = plan.lora.dropout;
    cfg.dora = plan.lora.dora;
    // PEFT autocast_adapter_dtype=True keeps adapters in fp32; litgpt, torchtune and mlx build
    // them in the model dtype (FrameworkBehaviour::adapters_fp32).
    cfg.adapter_bytes = plan.behaviour.adapters_fp32 ? 4 : cfg.compute_bytes;
  }
  cfg.experts_autocast = cfg.autocast && plan.behaviour.experts_as_linears;
  cfg.expert_bytes = cfg.autocast && !cfg.experts_autocast
                         ? dtype_info(recipe(plan.precision).weights).bits / 8
                         : cfg.compute_bytes;
  cfg.cpu_kernels = plan.cpu_kernels;
  cfg.seq = plan.seq;
  cfg.batch = plan.batch;
  cfg.padding_mask = plan.behaviour.padding_mask;
  cfg.bnb_saves_input = plan.method == Method::qlora && plan.behaviour.bnb_saves_4bit_input;
  cfg.lm_head_quantised = plan.method == Method::qlora && plan.behaviour.quantises_lm_head;
  cfg.fused_qkv_attention = plan.behaviour.fused_qkv_attention;
  if (lora && cfg.fused_qkv_attention) {
    // litgpt's enable_lora: which of q, k, v the targets reach, read as apply_method reads them
    // (targets_group: "all-linear" and "attention" reach all three).
    const auto reaches = [&](Role role) {
      TensorGroup g;
      g.role = role;
      return targets_group(plan.lora.targets, g, false);
    };
    cfg.lora_q = reaches(Role::q);
    cfg.lora_k = reaches(Role::k);
    cfg.lora_v = reaches(Role::v);
  }
  cfg.compiled_layers = plan.behaviour.compiled_layers;
  // Gradient checkpointing turns use_cache off (transformers utils/generic.py
  // merge_with_config_defaults; modeling_utils.py gradient_checkpointing_enable).
  if (plan.behaviour.kv_cache_in_output && plan.checkpointing == Checkpointing::none &&
      runs_transformers_models(plan.framework)) {
    cfg.output_cache = plan.behaviour.outputs_kept ? OutputCache::kept : OutputCache::until_loss;
  }
  cfg.cache_copies_states = plan.behaviour.cache_copies_states;
  return cfg;
}

namespace {

bool is_adapter_group(const TensorGroup& g) {
  return g.adapter != AdapterPart::none;
}

}  // namespace

std::vector<LayerPlan> layer_plans(const ModelSpec& spec, const ParameterInventory& inv,
                                   const TrainingPlan& plan) {
  std::vector<LayerPlan> out(static_cast<std::size_t>(spec.layers));
  // Adapters as apply_method appended them (lora_A beside the base tensor, same role and layers):
  // the inventory is the one place targets resolve, so a target that reached nothing adds no
  // adapter activations.
  std::vector<RoleSet> adapted_by_layer(out.size(), 0);
  std::vector<bool> experts_by_layer(out.size(), false);
  for (const TensorGroup& g : inv.groups) {
    if (g.mtp || g.adapter != AdapterPart::lora_a || g.layer_first < 0) continue;
    for (std::int64_t i = g.layer_first; i <= g.layer_last && i < spec.layers; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (g.expert == ExpertKind::routed) {
        experts_by_layer[k] = true;
      } else {
        adapted_by_layer[k] |= role_bit(g.role);
      }
    }
  }
  bool embedding_trains = false;
  for (const TensorGroup& g : inv.groups) {
    if (g.mtp || !g.trainable || is_adapter_group(g)) continue;
    if (g.role == Role::embedding || g.role == Role::position_embedding) embedding_trains = true;
    if (g.layer_first < 0 || g.is_bias) continue;
    // apply_method gives each run of trained layers its own group and range.
    for (std::int64_t i = g.layer_first; i <= g.layer_last && i < spec.layers; ++i) {
      LayerPlan& l = out[static_cast<std::size_t>(i)];
      switch (g.expert) {
        case ExpertKind::none:
          l.trainable |= role_bit(g.role);
          break;
        case ExpertKind::routed:
          l.trainable_routed |= role_bit(g.role);
          break;
        case ExpertKind::shared:
          l.trainable_shared |= role_bit(g.role);
          break;
      }
    }
  }
  bool rg = embedding_trains || input_require_grads_hooked(plan);
  for (std::int64_t i = 0; i < spec.layers; ++i) {
    LayerPlan& l = out[static_cast<std::size_t>(i)];
    l.layer = i;
    l.adapted = adapted_by_layer[static_cast<std::size_t>(i)];
    l.adapted_experts = experts_by_layer[static_cast<std::size_t>(i)] && is_moe_layer(spec, i);
    l.input_requires_grad = rg;
    rg = rg || l.trainable || l.trainable_routed || l.trainable_shared || l.adapted ||
         l.adapted_experts;
  }
  return out;
}

// DoRA (PEFT use_dora=True), per adapted linear of `in` -> `out` features, beyond its LoRA terms
// (peft/tuners/lora/dora.py DoraLinearLayer.forward; measured in validation/data/dora.jsonl):
//  - result_dora = (m / ||W + s BA|| - 1) * base_result + (m / ||...||) * lora_result * s: both
//    products keep their tensor operand for the magnitude's gradient: the LoRA output (adapter
//    dtype) and the base output (compute dtype). With LoRA dropout the forward recomputes the
//    base output as F.linear(dropped x, W.to(adapter dtype)): that output is in the adapter dtype,
//    and the weight copy is kept for the input's gradient.
//  - three out-sized fp32 vectors (the detached norm, the scale and the scale - 1).
//  - get_lora_weight's lora_B(lora_A(eye(in))) only feeds the detached norm: its graph is freed
//    as the module returns, so the identity is a forward transient, not a saved tensor.
void dora_terms(Sink& s, const ModelSpec& spec, const LayerPlan& l, const ActivationSettings& cfg) {
  if (!cfg.dora || cfg.lora_rank == 0 || l.adapted == 0) return;
  constexpr const char* kDora = "peft tuners/lora/dora.py DoraLinearLayer.forward";
  // weight_norm [out], mag_norm_scale [1, out] and mag_norm_scale - 1, all fp32.
  constexpr std::int64_t kNormVectors = 3;
  constexpr std::int64_t kFp32Bytes = 4;
  const std::int64_t e = cfg.autocast ? 2 : cfg.adapter_bytes;
  const bool dropout = cfg.lora_dropout > 0;
  const std::int64_t base_bytes = dropout ? e : (cfg.autocast ? 2 : cfg.compute_bytes);
  const std::int64_t q = spec.heads * qk_head_dim(spec);
  const std::int64_t kv = spec.kv_heads * qk_head_dim(spec);
  const std::int64_t vo = spec.heads * v_head_dim(spec);
  const std::int64_t vv = spec.kv_heads * v_head_dim(spec);
  const bool moe = is_moe_layer(spec, l.layer);
  const std::int64_t h = spec.hidden;
  const std::int64_t f = spec.intermediate;
  struct Linear {
    Role role;
    std::int64_t in, out;
    bool counts;
  };
  // MLA projections and MoE layers' shared-expert linears are left out (not measured).
  const Linear linears[] = {{Role::q, h, q, !spec.mla},
                            {Role::k, h, kv, !spec.mla},
                            {Role::v, h, vv, !spec.mla},
                            {Role::o, vo, h, !spec.mla},
                            {Role::qkv, h, q + kv + vv, !spec.mla},
                            {Role::gate, h, f, !moe},
                            {Role::up, h, f, !moe},
                            {Role::gate_up, h, 2 * f, !moe},
                            {Role::down, f, h, !moe}};
  std::int64_t per_token = 0, per_layer = 0;
  for (const Linear& m : linears) {
    if (!m.counts || !has(l.adapted, m.role)) continue;
    per_token += m.out * (e + base_bytes);
    per_layer += kNormVectors * m.out * kFp32Bytes;
    if (dropout) per_layer += m.out * m.in * e;
  }
  s.token("DoRA: LoRA and base outputs kept for the magnitude's gradient", per_token, kDora);
  s.fixed(dropout ? "DoRA: norm vectors and the weight copy in the adapter dtype"
                  : "DoRA: norm vectors",
          per_layer, kDora);
}

// layer_terms() and the functions it calls read the layer's index only through these two; a new
// use of l.layer must be added here too.
bool same_layer_terms(const ModelSpec& spec, const LayerPlan& a, const LayerPlan& b) {
  return a.input_requires_grad == b.input_requires_grad && a.trainable == b.trainable &&
         a.trainable_routed == b.trainable_routed && a.trainable_shared == b.trainable_shared &&
         a.adapted == b.adapted && a.adapted_experts == b.adapted_experts &&
         is_sliding_layer(spec, a.layer) == is_sliding_layer(spec, b.layer) &&
         is_moe_layer(spec, a.layer) == is_moe_layer(spec, b.layer);
}

std::vector<ActivationTerm> layer_terms(const ModelSpec& spec, const LayerPlan& l,
                                        const ActivationSettings& settings,
                                        RoleSet* no_grad_inputs) {
  std::vector<ActivationTerm> out;
  Sink s{out, no_grad_inputs};
  ActivationSettings cfg = settings;
  cfg.compiled_layers = settings.compiled_layers && compiled_layer_probed(spec, l, settings);
  const std::int64_t h = spec.hidden;
  const bool t_norm = has(l.trainable, Role::layer_norm);
  const bool in_rg = l.input_requires_grad;
  // Residual dropout on a sublayer output (compute dtype): GPT-2 resid_pdrop, Phi resid_dropout,
  // GPT-NeoX post_attention/post_mlp_dropout, StarCoder2 residual_dropout, Falcon dropout_add.
  const int mask = dropout_mask_bytes(cfg, cfg.compute_bytes);
  auto residual_dropout = [&](const std::string& what, bool rg) {
    if (spec.hidden_dropout > 0 && rg) {
      s.token("residual dropout mask after " + what, mask * h, "PyTorch aten native Dropout.cpp");
    }
  };
  if (spec.parallel_block) {
    // Attention and MLP read the layer input through one shared norm (Phi, Cohere, Falcon-7B) or
    // a norm each (GPT-NeoX, Falcon new_decoder_architecture); their outputs and the residual are
    // summed (modeling_gpt_neox.py use_parallel_residual, modeling_phi.py PhiDecoderLayer).
    const bool n1 = norm_terms(s, spec, "input_layernorm", h, 1, in_rg, t_norm, cfg);
    const AttentionResult attn = attention_terms(s, spec, l, n1, cfg);
    bool mlp_in_rg = n1;
    bool shared = spec.parallel_norms == 1 && attn.input_saved;
    if (spec.parallel_norms == 2) {
      // Both norms read the layer input: the second saves the tensor the first already saves
      // (CPU trace of StableLM-Alpha's and the tiny GPT-NeoX's layers: one copy per layer).
      mlp_in_rg = norm_terms(s, spec, "post_attention_layernorm (MLP branch)", h, 1, in_rg, t_norm,
                             cfg, /*input_kept=*/true);
      shared = false;
    }
    const bool out_rg = in_rg || attn.output_rg || l.trainable || l.adapted || l.trainable_routed ||
                        l.trainable_shared || l.adapted_experts;
    if (spec.residual_dropouts >= 2) residual_dropout("attention", attn.output_rg);
    mlp_terms(s, spec, l, mlp_in_rg, shared, cfg);
    residual_dropout(spec.residual_dropouts >= 2 ? "the MLP" : "attention + MLP", out_rg);
    dora_terms(s, spec, l, cfg);
    return out;
  }
  bool rg = in_rg;
  bool attn_in_rg = rg;
  if (spec.norm_placement != NormPlacement::post) {
    attn_in_rg = norm_terms(s, spec, "input_layernorm", h, 1, rg, t_norm, cfg);
  }
  const AttentionResult attn = attention_terms(s, spec, l, attn_in_rg, cfg);
  rg = rg || attn.output_rg || t_norm;
  if (spec.norm_placement != NormPlacement::pre) {
    norm_terms(s, spec,
               spec.norm_placement == NormPlacement::post ? "post_attention_layernorm (post-norm)"
                                                          : "post_attention_layernorm (sandwich)",
               h, 1, attn.output_rg, t_norm, cfg);
  }
  residual_dropout("attention", rg);
  bool mlp_in_rg = rg;
  if (spec.norm_placement != NormPlacement::post) {
    mlp_in_rg =
        norm_terms(s, spec,
                   spec.norm_placement == NormPlacement::sandwich ? "pre_feedforward_layernorm"
                                                                  : "post_attention_layernorm",
                   h, 1, rg, t_norm, cfg);
  }
  mlp_terms(s, spec, l, mlp_in_rg, false, cfg);
  const bool mlp_rg = rg || l.trainable || l.adapted || l.trainable_routed || l.trainable_shared ||
                      l.adapted_experts;
  if (spec.norm_placement != NormPlacement::pre) {
    norm_terms(s, spec,
               spec.norm_placement == NormPlacement::post ? "post_feedforward_layernorm (post-norm)"
                                                          : "post_feedforward_layernorm (sandwich)",
               h, 1, mlp_rg, t_norm, cfg);
  }
  residual_dropout("the MLP", mlp_rg);
  dora_terms(s, spec, l, cfg);
  return out;
}

std::vector<ActivationTerm> final_terms(const ModelSpec& spec, bool input_rg, bool norm_trainable,
                                        bool lm_head_trainable, const ActivationSettings& cfg,
                                        bool lm_head_adapted) {
  std::vector<ActivationTerm> out;
  Sink s{out};
  // The final norm is outside the compiled layers (torchtune compiles each layer and the loss).
  ActivationSettings eager = cfg;
  eager.compiled_layers = false;
  const bool head_in_rg =
      norm_terms(s, spec, "final norm", spec.hidden, 1, input_rg, norm_trainable, eager);
  // A 4-bit lm_head keeps its input under bitsandbytes < 0.43.2 like the layers' linears;
  // MatMul4Bit saves it only when it requires grad (ctx.needs_input_grad). A 16-bit one keeps
  // nothing.
  ActivationSettings head = cfg;
  head.bnb_saves_input = cfg.bnb_saves_input && cfg.lm_head_quantised && input_rg;
  // An adapted head's LoRA path runs on the whole input (litgpt: on each chunk, the same bytes):
  // peft tuners/lora/layer.py Linear.forward, litgpt lora.py LoRALinear.
  linear_inputs(s, "lm_head input", spec.hidden, cfg.stream_bytes,
                lm_head_trainable && cfg.head_saves_input ? 1 : 0, lm_head_adapted ? 1 : 0, false,
                head, head_in_rg);
  return out;
}

std::int64_t terms_per_token(const std::vector<ActivationTerm>& terms) {
  std::int64_t n = 0;
  for (const ActivationTerm& t : terms) {
    if (!until_loss(t)) n += t.bytes_per_token;
  }
  return n;
}

std::int64_t terms_per_score(const std::vector<ActivationTerm>& terms) {
  std::int64_t n = 0;
  for (const ActivationTerm& t : terms) {
    if (!until_loss(t)) n += t.bytes_per_score;
  }
  return n;
}

std::int64_t kv_cache_bytes_per_token(const ModelSpec& spec, const ActivationSettings& cfg) {
  if (spec.mla) return cfg.compute_bytes * spec.heads * (qk_head_dim(spec) + v_head_dim(spec));
  return 2 * cfg.compute_bytes * spec.kv_heads * spec.head_dim;
}

bool any_held_by_graph(const std::vector<ActivationTerm>& terms) {
  return std::any_of(terms.begin(), terms.end(),
                     [](const ActivationTerm& t) { return t.held_by_graph; });
}

std::int64_t terms_bytes(const std::vector<ActivationTerm>& terms, const ModelSpec& spec,
                         std::int64_t batch, std::int64_t seq, TermLife which) {
  // Saturating: near the size limits (limits.h) a sum of many terms can pass 2^63; a saturated
  // total is reported as too large to price, never wrapped.
  std::int64_t total = 0;
  for (const ActivationTerm& t : terms) {
    if ((which == TermLife::until_loss) != until_loss(t)) continue;
    if (which == TermLife::freed_in_backward && t.held_by_graph) continue;
    if (which == TermLife::held_by_graph && !t.held_by_graph) continue;
    total = sat_add(total, sat_mul(sat_mul(t.bytes_per_token, batch), seq));
    total = sat_add(
        total, sat_mul(sat_mul(sat_mul(sat_mul(t.bytes_per_score, batch), spec.heads), seq), seq));
    total = sat_add(total, sat_mul(sat_mul(sat_mul(t.bytes_per_pair, batch), seq), seq));
    total = sat_add(total, t.bytes_fixed);
  }
  return total;
}

std::int64_t layer_backward_transient_bytes(const ModelSpec& spec, std::int64_t layer,
                                            const ActivationSettings& cfg, std::int64_t batch,
                                            std::int64_t seq) {
  const std::int64_t tokens = batch * seq;
  const std::int64_t width =
      is_moe_layer(spec, layer) ? spec.moe.top_k * spec.moe.expert_intermediate : spec.intermediate;
  std::int64_t bytes = 2 * cfg.compute_bytes * tokens * width;
  if (cfg.attention == Attention::eager) bytes += 10 * batch * spec.heads * seq * seq;
  return bytes;
}

int activation_saved_tensors(Activation act) {
  switch (act) {
    case Activation::silu:       // F.silu saves its input
    case Activation::gelu:       // F.gelu saves its input
    case Activation::gelu_tanh:  // F.gelu(approximate="tanh") saves its input
    case Activation::relu:       // threshold_backward uses the saved result
      return 1;
    case Activation::quick_gelu:  // x * sigmoid(1.702 x): sigmoid's result and x (mul)
      return 2;
    case Activation::gelu_new:   // 0.5*x*(1+tanh(c*(x+0.044715*pow(x,3)))): x (pow), tanh's
      return 4;                  // result, then 0.5*x and 1+tanh (the final mul)
    case Activation::gelu_fast:  // 0.5*x*(1+tanh(x*c*(1+0.044715*x*x))): 0.044715x and x (mul),
      return 7;                  // x*c and 1+..., tanh's result, 0.5x and 1+tanh
    case Activation::clamped_swiglu:  // the clamps keep the gate and up halves (their saved
      return 4;                       // inputs), g * sigmoid(alpha g) keeps g and sigmoid's result;
                                      // the final mul's up operand is (up + 1), a new tensor
  }
  return 1;
}

int dropout_mask_bytes(const ActivationSettings& cfg, int input_bytes) {
  // CUDA: at::dropout -> native_dropout (fused), which saves a bool mask. CPU fails
  // is_fused_kernel_acceptable, so _dropout_impl multiplies by a noise tensor of the input's
  // dtype and mul saves it (aten/src/ATen/native/Dropout.cpp).
  return cfg.cpu_kernels ? input_bytes : 1;
}

AttentionKernel attention_kernel(const ModelSpec& spec, const ActivationSettings& cfg) {
  if (cfg.attention == Attention::eager) return AttentionKernel::eager;
  // FlashAttention-2 runs for any family that declares it, Gemma 2 included: its attention
  // softcap is applied in the kernel (flash-attn >= 2.6 flash_attn_func(softcap=...);
  // Gemma2PreTrainedModel._supports_flash_attn_2 = True).
  if (cfg.attention == Attention::flash) return AttentionKernel::fused;
  // Gemma 2 declares _supports_sdpa = False: asked for sdpa, transformers runs eager attention.
  if (!spec.sdpa_supported) return AttentionKernel::eager;
  if (spec.sdpa_math_only) return AttentionKernel::math;
  // The CPU flash kernel rejects dropout (sdp_utils_cpp.cpp check_for_dropout); CUDA's flash
  // and memory-efficient kernels apply it in-kernel from a Philox seed and keep no mask.
  if (cfg.cpu_kernels && spec.attention_dropout > 0) return AttentionKernel::math;
  // The CPU flash kernel needs equal q/k and v head widths (sdp_utils_cpp.cpp
  // check_head_dim_size_cpp); MLA's 192 vs 128 goes to math there, while CUDA's
  // memory-efficient kernel accepts a different v width.
  if (cfg.cpu_kernels && qk_head_dim(spec) != v_head_dim(spec)) return AttentionKernel::math;
  return AttentionKernel::fused;
}

std::int64_t embedding_dropout_bytes_per_token(const ModelSpec& spec,
                                               const ActivationSettings& cfg) {
  if (spec.embedding_dropout <= 0) return 0;
  return dropout_mask_bytes(cfg, cfg.stream_bytes) * spec.hidden;
}

std::int64_t korthikanti_layer_bytes(const ModelSpec& spec, std::int64_t batch, std::int64_t seq) {
  const std::int64_t sbh = seq * batch * spec.hidden;
  return sbh * 34 + 5 * spec.heads * seq * seq * batch;
}

}  // namespace trainmem

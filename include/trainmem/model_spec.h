// ModelSpec: an architecture as plain data. Adapters (src/adapters/, one per Hugging Face family)
// are the only code that knows config.json keys; they fill this struct, and inventory() turns it
// into the exact list of parameter tensors. Counts are integers; sizes are in elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainmem/dtype.h"

namespace trainmem {

// How a layer normalises (each saves different tensors for backward, activation_model.cpp):
//  rms_norm       LlamaRMSNorm: weight * x_norm.to(input dtype); weight only
//  rms_norm_fp32  Gemma/OLMo-2 RMSNorm: the weight multiplies the fp32 normalized tensor
//  layer_norm     nn.LayerNorm (native_layer_norm): weight and bias
//  mean_centered  CohereLayerNorm: LayerNorm in Python ops, fp32, weight only
enum class NormKind { rms_norm, rms_norm_fp32, layer_norm, mean_centered };

// Where a layer's norms sit. pre: before attention and before the MLP (Llama); sandwich: before
// and after each (Gemma 2/3, four norms); post: after each sublayer's output only (OLMo-2).
enum class NormPlacement { pre, sandwich, post };

// Norms on q and k. per_head: over head_dim with one shared weight (Qwen3, Gemma 3, Phi
// qk_layernorm); per_head_weights: over head_dim with a weight per head (Cohere use_qk_norm,
// CohereLayerNorm((heads, head_dim))); full_width: over heads x head_dim (OLMo-2 q_norm/k_norm).
enum class QkNorm { none, per_head, per_head_weights, full_width };

// The feed-forward block: gated (gate, up, down; SwiGLU/GeGLU) or plain (fc in, fc out; GPT-2).
enum class MlpKind { gated, plain };

// The MLP activation as transformers' ACT2FN names it (activations.py); each saves a different
// number of intermediate tensors for backward (activation_saved_tensors in activation_model.h).
enum class Activation { silu, gelu, gelu_tanh, gelu_new, gelu_fast, quick_gelu, relu };

// Mixture of experts. experts == 0 means a dense model.
struct MoeSpec {
  std::int64_t experts = 0;              // routed experts per MoE layer
  std::int64_t top_k = 0;                // experts each token is routed to
  std::int64_t expert_intermediate = 0;  // width of one expert's MLP (moe_intermediate_size)
  std::int64_t shared_experts = 0;       // always-on experts (DeepSeek n_shared_experts)
  std::int64_t shared_intermediate = 0;  // width of one shared expert's MLP
  std::int64_t first_dense_layers = 0;   // leading layers with a dense MLP (first_k_dense_replace)
  std::int64_t layer_step = 1;           // every layer_step-th layer is MoE (decoder_sparse_step)
  bool router_score_bias = false;        // DeepSeek-V3 e_score_correction_bias, one per expert
  bool shared_expert_gate = false;       // Qwen2-MoE style sigmoid gate on the shared expert
};

// Multi-head latent attention (DeepSeek-V2/V3). q_lora_rank == 0 means q is projected directly.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

struct ModelSpec {
  std::string name;        // display name, e.g. "Qwen/Qwen3-8B"
  std::string model_type;  // the config's model_type, e.g. "qwen3"

  std::int64_t vocab = 0;          // vocab_size
  std::int64_t hidden = 0;         // hidden_size (d_model)
  std::int64_t layers = 0;         // num_hidden_layers
  std::int64_t heads = 0;          // num_attention_heads
  std::int64_t kv_heads = 0;       // num_key_value_heads (== heads for multi-head attention)
  std::int64_t head_dim = 0;       // explicit head_dim, else hidden / heads
  std::int64_t intermediate = 0;   // dense MLP width (intermediate_size)
  std::int64_t max_positions = 0;  // max_position_embeddings (n_positions for GPT-2)

  bool tied_embeddings = false;    // lm_head shares the embedding matrix
  bool learned_positions = false;  // a position-embedding table (GPT-2)
  bool qkv_bias = false;           // q/k/v projections carry biases (Qwen2)
  bool o_bias = false;             // output projection bias (GPT-2)
  bool mlp_bias = false;           // MLP biases (GPT-2)
  QkNorm qk_norm = QkNorm::none;   // norms on q and k (Qwen3, Gemma 3: per head; OLMo-2: full)
  bool fused_qkv = false;          // one qkv_proj and one gate_up_proj module (Phi-3)
  bool fused_mlp = true;           // with fused_qkv: one gate_up_proj too (Phi-3; not GPT-NeoX)
  bool lm_head_bias = false;       // lm_head carries a bias (Phi)
  NormKind norm = NormKind::rms_norm;
  NormPlacement norm_placement = NormPlacement::pre;
  // Attention and MLP both read the layer input and add to one residual (GPT-NeoX
  // use_parallel_residual, Falcon parallel_attn, Phi, Cohere); parallel_norms says whether the
  // two branches share one norm (Phi, Cohere, Falcon-7B) or have one each (GPT-NeoX, Falcon-40B).
  bool parallel_block = false;
  std::int64_t parallel_norms = 1;
  MlpKind mlp = MlpKind::gated;
  Activation activation = Activation::silu;
  std::int64_t rotary_dim = 0;      // rotated width per head (partial rotary); 0 = the whole head
  std::int64_t sliding_window = 0;  // sliding-window attention width (0: none)
  // Which layers use the window (layer_types "sliding_attention"); empty: every layer does.
  std::vector<bool> sliding_layers;

  MoeSpec moe;
  bool mla = false;
  MlaSpec mla_spec;
  std::int64_t mtp_layers = 0;  // DeepSeek-V3 next-token-prediction layers, reported separately

  double attention_dropout = 0.0;      // attention_dropout / attn_pdrop
  double hidden_dropout = 0.0;         // hidden_dropout / resid_pdrop: on each sublayer's output
  std::int64_t residual_dropouts = 2;  // dropout sites on the residual per layer (Falcon: 1)
  double embedding_dropout = 0.0;      // embd_pdrop / embedding_dropout / emb_dropout
  double logit_softcap = 0.0;          // final_logit_softcapping (Gemma 2): an extra logits copy
  double attn_softcap = 0.0;           // attn_logit_softcapping (Gemma 2, eager): tanh saves
  bool sdpa_supported = true;          // false: transformers runs eager (Gemma 2)
  bool eager_softmax_fp32 = true;      // eager softmax in fp32 (HF default); Falcon: hidden dtype
  // SDPA receives K/V with fewer heads and no enable_gqa (Falcon multi_query), so no fused kernel
  // accepts it and PyTorch runs the math kernel (sdp_utils check_batch_size_and_num_heads_dense).
  bool sdpa_math_only = false;
  // K/V are materialised at every query head before attention (Falcon new_decoder_architecture:
  // broadcast_to then flatten copies), so attention keeps all-head K and V.
  bool kv_all_heads = false;
  // v reaches attention as a view of the fused q/k/v projection output while q and k are new
  // tensors after rotary, so the saved v keeps the whole output (Phi-3, GPT-NeoX).
  bool fused_qkv_view = false;

  // Non-empty for a model_type trainmem has no adapter for: weights are exact (config keys or
  // safetensors headers); activations follow this known layer shape, an estimate.
  std::string estimated_from;

  Dtype storage_dtype = Dtype::bf16;  // torch_dtype of the checkpoint

  std::int64_t published_params = 0;  // the count the model card states (0: unknown)
  std::string published_label;        // as written there, e.g. "8.2B"

  // "key = value" for each config.json key that was absent and took the family's default (the
  // value of transformers' config class); reported as a note for configs the user supplies.
  std::vector<std::string> defaulted_keys;
  // Parts of a multimodal checkpoint outside the language model ("vision_config"): named in the
  // config but not priced (their weights, and the optimizer state when they train, are extra).
  std::vector<std::string> unpriced_parts;
};

// True when layer `layer` (0-based) has a mixture-of-experts MLP.
bool is_moe_layer(const ModelSpec& spec, std::int64_t layer);

// True when layer `layer` attends through a sliding window.
bool is_sliding_layer(const ModelSpec& spec, std::int64_t layer);

// Number of MoE layers among spec.layers.
std::int64_t moe_layer_count(const ModelSpec& spec);

// Query/key width per head in attention scores (MLA: nope + rope).
std::int64_t qk_head_dim(const ModelSpec& spec);
// Value width per head (MLA: v_head_dim).
std::int64_t v_head_dim(const ModelSpec& spec);

}  // namespace trainmem

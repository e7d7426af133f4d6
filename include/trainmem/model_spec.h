// ModelSpec: an architecture as plain data. Adapters (src/adapters/, one per Hugging Face family)
// are the only code that knows config.json keys; they fill this struct, and inventory() turns it
// into the exact list of parameter tensors. Counts are integers; sizes are in elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainmem/dtype.h"

namespace trainmem {

// How a layer normalises: RMSNorm has a weight only; LayerNorm has weight and bias.
enum class NormKind { rms_norm, layer_norm };

// The feed-forward block: gated (gate, up, down; SwiGLU/GeGLU) or plain (fc in, fc out; GPT-2).
enum class MlpKind { gated, plain };

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
  bool qk_norm = false;            // per-head RMSNorm on q and k (Qwen3, Gemma 3)
  bool fused_qkv = false;          // one qkv_proj and one gate_up_proj module (Phi-3)
  NormKind norm = NormKind::rms_norm;
  std::int64_t norms_per_layer = 2;  // 2 (pre-attention, pre-MLP); 4 in Gemma 2/3 (plus post)
  MlpKind mlp = MlpKind::gated;

  MoeSpec moe;
  bool mla = false;
  MlaSpec mla_spec;
  std::int64_t mtp_layers = 0;  // DeepSeek-V3 next-token-prediction layers, reported separately

  double attention_dropout = 0.0;  // attention_dropout / attn_pdrop
  double hidden_dropout = 0.0;     // hidden_dropout / resid_pdrop
  double logit_softcap = 0.0;      // final_logit_softcapping (Gemma 2): an extra logits copy

  Dtype storage_dtype = Dtype::bf16;  // torch_dtype of the checkpoint

  std::int64_t published_params = 0;  // the count the model card states (0: unknown)
  std::string published_label;        // as written there, e.g. "8.2B"

  // "key = value" for each config.json key that was absent and took the family's default (the
  // value of transformers' config class); reported as a note for configs the user supplies.
  std::vector<std::string> defaulted_keys;
};

// True when layer `layer` (0-based) has a mixture-of-experts MLP.
bool is_moe_layer(const ModelSpec& spec, std::int64_t layer);

// Number of MoE layers among spec.layers.
std::int64_t moe_layer_count(const ModelSpec& spec);

// Query/key width per head in attention scores (MLA: nope + rope).
std::int64_t qk_head_dim(const ModelSpec& spec);
// Value width per head (MLA: v_head_dim).
std::int64_t v_head_dim(const ModelSpec& spec);

}  // namespace trainmem

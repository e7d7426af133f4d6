// A model_type trainmem has no adapter for. Its config is read through the standard Hugging Face
// keys every decoder config carries (PretrainedConfig conventions: vocab_size, hidden_size,
// num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size,
// tie_word_embeddings, attention_bias, mlp_bias, hidden_act; MoE: num_local_experts /
// num_experts, num_experts_per_tok, moe_intermediate_size) as the closest known layer shape, a
// Llama decoder layer (pre-norm RMSNorm, q/k/v/o, gated MLP) or its Mixtral-style MoE variant.
// Weights, gradients and optimizer state are exact when the layout matches (and always exact from
// safetensors headers); activations are an estimate, said so in a note (src/io/config.cpp).
#include <fmt/format.h>

#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_generic(ConfigReader& r, ModelSpec& s) {
  if (r.flag("is_encoder_decoder", false)) {
    r.fail("is_encoder_decoder", "encoder-decoder models are not modelled (decoder-only only)");
    return;
  }
  read_common(r,
              {.vocab = {},
               .hidden = {},
               .layers = {},
               .heads = {},
               .intermediate = {},
               .max_positions = {},
               .head_dim = {},
               .tied = false,
               .activation = Activation::silu},
              s);
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
  s.mlp_bias = r.flag("mlp_bias", false);
  const bool moe = r.has("num_local_experts") || r.has("num_experts") || r.has("n_routed_experts");
  if (moe) {
    s.moe.experts = r.count_any({"num_local_experts", "num_experts", "n_routed_experts"});
    s.moe.top_k = r.count("num_experts_per_tok");
    s.moe.expert_intermediate =
        r.has("moe_intermediate_size") ? r.count("moe_intermediate_size") : s.intermediate;
  }
  s.estimated_from = moe ? "mixtral (Llama attention, routed gated-MLP experts)"
                         : "llama (pre-norm RMSNorm, q/k/v/o attention, gated MLP)";
}

}  // namespace trainmem::adapters

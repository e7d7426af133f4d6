// deepseek_v2 (DeepSeek-V2, V2-Lite): multi-head latent attention (q_lora_rank null in V2-Lite:
// q projected directly), first_k_dense_replace dense layers, then MoE layers of n_routed_experts
// experts (moe_intermediate_size) and one shared MLP of n_shared_experts x moe_intermediate_size;
// softmax routing without DeepSeek-V3's score-correction bias, no MTP layers
// (transformers/models/deepseek_v2/modeling_deepseek_v2.py, configuration_deepseek_v2.py).
#include <fmt/format.h>

#include "model/adapters/adapters.h"
#include "model/model_spec.h"

namespace trainmem::adapters {

void read_deepseek_v2(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 102400,
               .hidden = 4096,
               .heads = 32,
               .intermediate = 11008,
               .max_positions = 2048,
               .head_dim = {},
               .tied = false,
               .activation = Activation::silu},
              s);
  s.mla = true;
  // "q_lora_rank": null (V2-Lite) means q is projected directly.
  s.mla_spec.q_lora_rank = r.is_null("q_lora_rank") ? 0 : r.optional_count("q_lora_rank", 1536);
  s.mla_spec.kv_lora_rank = r.count("kv_lora_rank", 512);
  s.mla_spec.qk_nope_head_dim = r.count("qk_nope_head_dim", 128);
  s.mla_spec.qk_rope_head_dim = r.count("qk_rope_head_dim", 64);
  s.mla_spec.v_head_dim = r.count("v_head_dim", 128);
  s.head_dim = s.mla_spec.qk_nope_head_dim + s.mla_spec.qk_rope_head_dim;
  s.moe.experts = r.count_any({"n_routed_experts", "num_local_experts"}, 64);
  s.moe.top_k = r.count("num_experts_per_tok", 6);
  s.moe.expert_intermediate = r.count("moe_intermediate_size", 1407);
  s.moe.shared_experts = r.optional_count("n_shared_experts", 2);
  s.moe.shared_intermediate = s.moe.expert_intermediate * s.moe.shared_experts;
  s.moe.first_dense_layers = r.optional_count("first_k_dense_replace", 0);
  const std::int64_t freq = r.optional_count("moe_layer_freq", 1);
  if (freq != 1) {
    r.fail("moe_layer_freq", fmt::format("only 1 (every layer after the dense ones) is modelled, "
                                         "got {}",
                                         freq));
  }
}

}  // namespace trainmem::adapters

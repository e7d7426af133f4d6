// deepseek_v3: multi-head latent attention, first_k_dense_replace dense layers then MoE layers of
// n_routed_experts + n_shared_experts, a router score-correction bias, and
// num_nextn_predict_layers MTP layers stored after the last layer
// (transformers/models/deepseek_v3/modeling_deepseek_v3.py, configuration_deepseek_v3.py).
#include "model/adapters/adapters.h"
#include "model/model_spec.h"

namespace trainmem::adapters {

void read_deepseek_v3(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 129280,
               .hidden = 7168,
               .heads = 128,
               .intermediate = 18432,
               .max_positions = 4096,
               .head_dim = {},
               .tied = false},
              s);
  s.mla = true;
  s.mla_spec.q_lora_rank = r.optional_count("q_lora_rank", 1536);
  s.mla_spec.kv_lora_rank = r.count("kv_lora_rank", 512);
  s.mla_spec.qk_nope_head_dim = r.count("qk_nope_head_dim", 128);
  s.mla_spec.qk_rope_head_dim = r.count("qk_rope_head_dim", 64);
  s.mla_spec.v_head_dim = r.count("v_head_dim", 128);
  s.head_dim = s.mla_spec.qk_nope_head_dim + s.mla_spec.qk_rope_head_dim;
  s.moe.experts = r.count_any({"n_routed_experts", "num_local_experts"}, 256);
  s.moe.top_k = r.count("num_experts_per_tok", 8);
  s.moe.expert_intermediate = r.count("moe_intermediate_size", 2048);
  s.moe.shared_experts = r.optional_count("n_shared_experts", 1);
  s.moe.shared_intermediate = s.moe.expert_intermediate * s.moe.shared_experts;
  s.moe.first_dense_layers = r.optional_count("first_k_dense_replace", 3);
  s.moe.router_score_bias = true;
  s.mtp_layers = r.optional_count("num_nextn_predict_layers", 0);
}

}  // namespace trainmem::adapters

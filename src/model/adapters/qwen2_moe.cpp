// qwen2_moe (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's attention (q/k/v biases, qkv_bias), MoE layers
// of num_experts experts (moe_intermediate_size, top num_experts_per_tok) every
// decoder_sparse_step layers, plus one shared expert (shared_expert_intermediate_size) behind a
// sigmoid gate (Linear(hidden, 1)) (transformers/models/qwen2_moe/modeling_qwen2_moe.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_qwen2_moe(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 151936,
               .hidden = 2048,
               .layers = 24,
               .heads = 16,
               .intermediate = 5632,
               .max_positions = 32768,
               .head_dim = {},
               .tied = false,
               .activation = Activation::silu},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 16;
  s.qkv_bias = r.flag("qkv_bias", true);
  s.moe.experts = r.count_any({"num_experts", "num_local_experts"}, 60);
  s.moe.top_k = r.count("num_experts_per_tok", 4);
  s.moe.expert_intermediate = r.count("moe_intermediate_size", 1408);
  s.moe.layer_step = r.count("decoder_sparse_step", 1);
  s.moe.shared_experts = 1;
  s.moe.shared_intermediate = r.count("shared_expert_intermediate_size", 5632);
  s.moe.shared_expert_gate = true;
  if (r.has("mlp_only_layers") && !r.is_empty_list("mlp_only_layers")) {
    r.fail("mlp_only_layers", "dense layers listed by index are not modelled (use an empty list)");
  }
}

}  // namespace trainmem::adapters

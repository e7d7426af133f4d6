// qwen3_moe: a router and num_experts experts of moe_intermediate_size in every MoE layer
// (Qwen3MoeSparseMoeBlock); layers in mlp_only_layers or off decoder_sparse_step are dense.
// transformers v5 spells num_experts as num_local_experts (ecosystem.md 1.1 rule 7).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_qwen3_moe(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 151936,
               .hidden = 2048,
               .heads = 32,
               .intermediate = 6144,
               .max_positions = 32768,
               .head_dim = 128,
               .tied = false},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 4;
  s.qk_norm = QkNorm::per_head;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
  s.moe.experts = r.count_any({"num_experts", "num_local_experts"}, 128);
  s.moe.top_k = r.count("num_experts_per_tok", 8);
  s.moe.expert_intermediate = r.count("moe_intermediate_size", 768);
  s.moe.layer_step = r.count("decoder_sparse_step", 1);
  // As qwen2_moe: a dense layer named by index would be priced as an MoE layer (Qwen3-30B-A3B
  // with layers 0-3 dense: 28.27B parameters, priced 30.53B), so it is refused.
  if (r.has("mlp_only_layers") && !r.is_empty_list("mlp_only_layers")) {
    r.fail("mlp_only_layers", "dense layers listed by index are not modelled (use an empty list)");
  }
}

}  // namespace trainmem::adapters

// mixtral: intermediate_size is each expert's width; num_local_experts experts, top-2 routing
// (transformers/models/mixtral/modeling_mixtral.py MixtralSparseMoeBlock).
#include "adapters/adapters.h"

namespace trainmem::adapters {

void read_mixtral(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 32000,
               .hidden = 4096,
               .layers = 32,
               .heads = 32,
               .intermediate = 14336,
               .max_positions = 131072,
               .head_dim = {},
               .tied = false},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 8;
  s.moe.experts = r.count("num_local_experts", 8);
  s.moe.top_k = r.count("num_experts_per_tok", 2);
  s.moe.expert_intermediate = s.intermediate;
}

}  // namespace trainmem::adapters

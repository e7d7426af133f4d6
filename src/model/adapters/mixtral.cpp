// mixtral: Mistral's attention and defaults (configuration_mixtral.py shares them), with every MLP
// replaced by num_local_experts experts of intermediate_size each and top-2 routing
// (transformers/models/mixtral/modeling_mixtral.py MixtralSparseMoeBlock).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_mixtral(ConfigReader& r, ModelSpec& s) {
  read_mistral(r, s);
  s.moe.experts = r.count("num_local_experts", 8);
  s.moe.top_k = r.count("num_experts_per_tok", 2);
  s.moe.expert_intermediate = s.intermediate;
}

}  // namespace trainmem::adapters

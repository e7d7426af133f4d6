// phi3: fused qkv_proj and gate_up_proj modules (transformers/models/phi3/modeling_phi3.py);
// the same parameter count as separate projections, but LoRA targets the fused names.
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_phi3(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 32064,
               .hidden = 3072,
               .heads = 32,
               .intermediate = 8192,
               .max_positions = 4096,
               .head_dim = {},
               .tied = false},
              s);
  s.fused_qkv = true;
  s.fused_qkv_view = true;  // value_states = qkv[..., query_pos + kv_dim:] (a view)
  s.q_heads_major = true;   // apply_rotary_pos_emb: torch.cat([(q_rot * cos) + ..., q_pass])
  s.hidden_dropout = read_probability(r, "resid_pdrop", 0.0);
}

}  // namespace trainmem::adapters

// phi (Phi-1, Phi-1.5, Phi-2): a parallel block (attention and MLP both read one LayerNorm's
// output and add to the residual), q/k/v/dense with biases, a plain fc1 -> gelu_new -> fc2 MLP
// with biases, partial rotary, resid_pdrop on both branch outputs, embd_pdrop on the embeddings,
// optional per-head qk_layernorm, and an lm_head with a bias
// (transformers/models/phi/modeling_phi.py, configuration_phi.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_phi(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 51200,
               .hidden = 2048,
               .heads = 32,
               .intermediate = 8192,
               .max_positions = 2048,
               .head_dim = {},
               .tied = false,
               .activation = Activation::gelu_new},
              s);
  s.norm = NormKind::layer_norm;
  s.parallel_block = true;
  s.parallel_norms = 1;
  s.mlp = MlpKind::plain;
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.lm_head_bias = true;
  if (r.flag("qk_layernorm", false)) s.qk_norm = QkNorm::per_head;
  s.hidden_dropout = read_probability(r, "resid_pdrop", 0.0);
  s.embedding_dropout = read_probability(r, "embd_pdrop", 0.0);
  const double partial = r.number("partial_rotary_factor", 0.5);
  s.rotary_dim = static_cast<std::int64_t>(static_cast<double>(s.head_dim) * partial);
  s.q_heads_major = true;  // PhiAttention: torch.cat((query_rot, query_pass), dim=-1)
}

}  // namespace trainmem::adapters

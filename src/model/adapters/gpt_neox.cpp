// gpt_neox (Pythia, GPT-NeoX-20B, StableLM-alpha): one fused query_key_value and a dense output
// with biases (attention_bias), a plain dense_h_to_4h -> gelu -> dense_4h_to_h MLP with biases,
// two LayerNorms per layer; with use_parallel_residual (the default) both read the layer input
// (a parallel block), otherwise the MLP's norm reads attention output + residual. hidden_dropout
// on the embeddings and both branch outputs; rotary_pct of each head rotated; untied embed_out
// (transformers/models/gpt_neox/modeling_gpt_neox.py, configuration_gpt_neox.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_gpt_neox(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 50432,
               .hidden = 6144,
               .heads = 64,
               .intermediate = 24576,
               .max_positions = 2048,
               .head_dim = {},
               .tied = false,
               .activation = Activation::gelu},
              s);
  s.kv_heads = s.heads;  // GPTNeoXAttention splits query_key_value into heads x 3 x head_size
  s.norm = NormKind::layer_norm;
  s.fused_qkv = true;
  s.fused_qkv_view = true;  // q, k, v = qkv.transpose(1, 2).chunk(3, dim=-1) (views)
  s.q_heads_major = true;   // apply_rotary_pos_emb: torch.cat([q_embed, q_pass], dim=-1)
  s.fused_mlp = false;
  s.mlp = MlpKind::plain;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", true);
  s.mlp_bias = true;
  s.parallel_block = r.flag("use_parallel_residual", true);
  s.parallel_norms = 2;
  s.hidden_dropout = read_probability(r, "hidden_dropout", 0.0);
  s.embedding_dropout = s.hidden_dropout;  // emb_dropout = nn.Dropout(config.hidden_dropout)
  const double pct = r.number("rotary_pct", r.number("partial_rotary_factor", 0.25));
  s.rotary_dim = static_cast<std::int64_t>(static_cast<double>(s.head_dim) * pct);
}

}  // namespace trainmem::adapters

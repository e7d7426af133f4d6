// falcon: one fused query_key_value ((heads + 2 x kv heads) x head_dim; multi_query: one K/V
// head), a dense output, a plain dense_h_to_4h -> gelu -> dense_4h_to_h MLP (ffn_hidden_size),
// biases when `bias`, LayerNorm with bias, tied embeddings by default.
// new_decoder_architecture (Falcon-40B/180B): num_kv_heads groups, ln_attn and ln_mlp (a
// parallel block with two norms), K/V broadcast to every head before attention. Otherwise
// parallel_attn (Falcon-7B): one shared input_layernorm; multi_query K/V reach SDPA with one head
// and no enable_gqa, so PyTorch runs the math kernel. One dropout_add per layer (hidden_dropout)
// in the parallel block (transformers/models/falcon/modeling_falcon.py, configuration_falcon.py).
#include <fmt/format.h>

#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_falcon(ConfigReader& r, ModelSpec& s) {
  s.vocab = r.count("vocab_size", 65024);
  s.hidden = r.count_any({"hidden_size", "n_embed"}, 4544);
  s.layers = r.count_any({"num_hidden_layers", "n_layer"}, 32);
  s.heads = r.count_any({"num_attention_heads", "n_head"}, 71);
  s.max_positions = r.optional_count("max_position_embeddings", 2048);
  s.head_dim = s.heads > 0 ? s.hidden / s.heads : 0;
  s.intermediate = r.has("ffn_hidden_size") ? r.count("ffn_hidden_size") : 4 * s.hidden;
  s.tied_embeddings = r.flag("tie_word_embeddings", true);
  s.activation = read_activation(r, "activation", Activation::gelu);
  if (r.flag("alibi", false)) r.fail("alibi", "ALiBi Falcon (falcon-rw) is not modelled");
  const bool new_arch = r.flag("new_decoder_architecture", false);
  const bool multi_query = r.flag("multi_query", true);
  const bool parallel = r.flag("parallel_attn", true);
  if (new_arch) {
    s.kv_heads = r.count_any({"num_kv_heads", "n_head_kv"}, s.heads);
    s.kv_all_heads = true;
  } else {
    s.kv_heads = multi_query ? 1 : s.heads;
    s.sdpa_math_only = multi_query;
  }
  // FalconModel.forward: create_causal_mask(..., allow_is_causal_skip=False), "always materialize
  // the mask so alibi can be added onto it"; every layer's SDPA gets it.
  s.sdpa_mask_always = true;
  s.fused_qkv = true;
  s.fused_mlp = false;
  s.mlp = MlpKind::plain;
  s.norm = NormKind::layer_norm;
  s.qkv_bias = s.o_bias = s.mlp_bias = r.flag("bias", false);
  s.parallel_block = new_arch || parallel;
  s.parallel_norms = new_arch ? r.optional_count("num_ln_in_parallel_attn", 2) : 1;
  if (s.parallel_norms != 1 && s.parallel_norms != 2) {
    r.fail("num_ln_in_parallel_attn", fmt::format("must be 1 or 2, got {}", s.parallel_norms));
  }
  s.eager_softmax_fp32 = false;  // F.softmax(..., dtype=hidden_states.dtype)
  s.hidden_dropout = read_probability(r, "hidden_dropout", 0.0);
  // Rotary Falcon passes dropout_p=0.0 to SDPA and applies no dropout in eager attention;
  // attention_dropout only feeds the sequential layout's dropout_add, not modelled separately.
  read_probability(r, "attention_dropout", 0.0);
  s.residual_dropouts = s.parallel_block ? 1 : 2;
}

}  // namespace trainmem::adapters

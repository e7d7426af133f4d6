// gpt2: n_embd / n_layer / n_head / n_positions aliases, n_inner null -> 4 x n_embd, LayerNorm
// with bias, Conv1D layers with biases, learned positions, implicitly tied head
// (transformers/models/gpt2/modeling_gpt2.py, configuration_gpt2.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_gpt2(ConfigReader& r, ModelSpec& s) {
  s.vocab = r.count("vocab_size", 50257);
  s.hidden = r.count_any({"n_embd", "hidden_size"}, 768);
  s.layers = r.count_any({"n_layer", "num_hidden_layers"}, 12);
  s.heads = r.count_any({"n_head", "num_attention_heads"}, 12);
  s.kv_heads = s.heads;
  s.head_dim = s.heads > 0 ? s.hidden / s.heads : 0;
  s.max_positions = r.count_any({"n_positions", "max_position_embeddings"}, 1024);
  s.intermediate = r.is_null("n_inner") || !r.has("n_inner") ? 4 * s.hidden : r.count("n_inner");
  s.tied_embeddings = r.flag("tie_word_embeddings", true);
  s.learned_positions = true;
  s.fused_qkv = true;
  s.fused_mlp = false;
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.norm = NormKind::layer_norm;
  s.eager_softmax_fp32 = false;  // eager_attention_forward: softmax in the hidden dtype
  s.mlp = MlpKind::plain;
  s.activation = read_activation(r, "activation_function", Activation::gelu_new);
  s.attention_dropout = read_probability(r, "attn_pdrop", 0.1);
  s.hidden_dropout = read_probability(r, "resid_pdrop", 0.1);
  s.embedding_dropout = read_probability(r, "embd_pdrop", 0.1);
}

}  // namespace trainmem::adapters

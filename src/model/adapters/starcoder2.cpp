// starcoder2: q/k/v/o and c_fc/c_proj with biases (use_bias), LayerNorm with bias, a plain
// c_fc -> gelu_pytorch_tanh -> c_proj MLP, GQA, sliding-window attention, residual_dropout on
// both sublayer outputs, embedding_dropout on the embeddings, tied embeddings by default
// (transformers/models/starcoder2/modeling_starcoder2.py, configuration_starcoder2.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_starcoder2(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 49152,
               .hidden = 3072,
               .layers = 30,
               .heads = 24,
               .intermediate = 12288,
               .max_positions = 4096,
               .head_dim = {},
               .tied = true,
               .activation = Activation::gelu_tanh},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 2;
  s.norm = NormKind::layer_norm;
  s.mlp = MlpKind::plain;
  s.qkv_bias = s.o_bias = s.mlp_bias = r.flag("use_bias", true);
  s.hidden_dropout = read_probability(r, "residual_dropout", 0.0);
  s.embedding_dropout = read_probability(r, "embedding_dropout", 0.0);
}

}  // namespace trainmem::adapters

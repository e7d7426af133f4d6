// gemma (Gemma 1): Llama's layout with GemmaRMSNorm (weight applied as 1 + w to the fp32
// normalized tensor), head_dim 256, tied embeddings, the embeddings scaled by sqrt(hidden) (a mul
// by a constant, nothing saved) and gelu_pytorch_tanh (a legacy hidden_act "gelu" is read as
// gelu_pytorch_tanh, as GemmaConfig does) (transformers/models/gemma/modeling_gemma.py,
// configuration_gemma.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_gemma(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 256000,
               .hidden = 3072,
               .layers = 28,
               .heads = 16,
               .intermediate = 24576,
               .max_positions = 8192,
               .head_dim = 256,
               .tied = true,
               .activation = Activation::gelu_tanh},
              s);
  if (s.activation == Activation::gelu) s.activation = Activation::gelu_tanh;
  if (r.has("hidden_activation")) {
    s.activation = read_activation(r, "hidden_activation", Activation::gelu_tanh);
  }
  if (!r.has("num_key_value_heads")) s.kv_heads = 16;
  s.norm = NormKind::rms_norm_fp32;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
}

}  // namespace trainmem::adapters

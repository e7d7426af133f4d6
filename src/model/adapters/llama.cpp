// llama: transformers/models/llama/configuration_llama.py defaults; attention_bias and mlp_bias
// add biases to q/k/v/o and gate/up/down.
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_llama(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 32000,
               .hidden = 4096,
               .layers = 32,
               .heads = 32,
               .intermediate = 11008,
               .max_positions = 2048,
               .head_dim = {},
               .tied = false},
              s);
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
  s.mlp_bias = r.flag("mlp_bias", false);
}

}  // namespace trainmem::adapters

// qwen2: q/k/v projections always carry biases, with no config key saying so
// (transformers/models/qwen2/modeling_qwen2.py Qwen2Attention: bias=True).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_qwen2(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 151936,
               .hidden = 4096,
               .layers = 32,
               .heads = 32,
               .intermediate = 22016,
               .max_positions = 32768,
               .head_dim = {},
               .tied = false},
              s);
  s.qkv_bias = true;
}

}  // namespace trainmem::adapters

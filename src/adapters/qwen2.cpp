// qwen2: q/k/v projections always carry biases, with no config key saying so
// (transformers/models/qwen2/modeling_qwen2.py Qwen2Attention: bias=True).
#include "adapters/adapters.h"

namespace trainmem::adapters {

void read_qwen2(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.max_positions = 32768,
               .head_dim = {},
               .tied = false},
              s);
  s.qkv_bias = true;
}

}  // namespace trainmem::adapters

// qwen3: per-head RMSNorm on q and k (Qwen3Attention q_norm, k_norm), explicit head_dim 128.
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_qwen3(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 151936,
               .hidden = 4096,
               .layers = 32,
               .heads = 32,
               .intermediate = 22016,
               .max_positions = 32768,
               .head_dim = 128,
               .tied = false},
              s);
  s.qk_norm = QkNorm::per_head;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
}

}  // namespace trainmem::adapters

// mistral: transformers/models/mistral/configuration_mistral.py defaults (8 KV heads, 14336 FFN).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_mistral(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 32000,
               .hidden = 4096,
               .layers = 32,
               .heads = 32,
               .intermediate = 14336,
               .max_positions = 131072,
               .head_dim = {},
               .tied = false},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 8;
}

}  // namespace trainmem::adapters

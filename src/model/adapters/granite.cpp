// granite (Granite 3.x dense): Llama's layout; embedding_multiplier, residual_multiplier and
// attention_multiplier are muls by constants (nothing saved), and logits / logits_scaling makes
// a new logits tensor while the old one is released (no change to the peak)
// (transformers/models/granite/modeling_granite.py, configuration_granite.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_granite(ConfigReader& r, ModelSpec& s) {
  read_llama(r, s);
  for (const char* key :
       {"embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling"}) {
    if (r.has(key) && r.number(key, 1.0) <= 0) r.fail(key, "must be a positive number");
  }
}

}  // namespace trainmem::adapters

// gemma2: four RMSNorms per layer, head_dim 256, tied embeddings by class default (configs do not
// store tie_word_embeddings), a final logit soft-cap (configuration_gemma2.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_gemma2(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 256000,
               .hidden = 2304,
               .layers = 26,
               .heads = 8,
               .intermediate = 9216,
               .max_positions = 8192,
               .head_dim = 256,
               .tied = true},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 4;
  s.norms_per_layer = 4;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
  s.logit_softcap = r.number("final_logit_softcapping", 30.0);
}

}  // namespace trainmem::adapters

// cohere (Command-R, Aya-23): a parallel block with one shared CohereLayerNorm (mean-centred,
// fp32, weight only), a gated SiLU MLP, optional per-head q/k norms with a weight per head
// (use_qk_norm), tied embeddings, logits * logit_scale (a new logits tensor; the old one is
// released) (transformers/models/cohere/modeling_cohere.py, configuration_cohere.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_cohere(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 256000,
               .hidden = 8192,
               .layers = 40,
               .heads = 64,
               .intermediate = 22528,
               .max_positions = 8192,
               .head_dim = {},
               .tied = true,
               .activation = Activation::silu},
              s);
  s.norm = NormKind::mean_centered;
  s.parallel_block = true;
  s.parallel_norms = 1;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
  if (r.flag("use_qk_norm", false)) s.qk_norm = QkNorm::per_head_weights;
}

}  // namespace trainmem::adapters

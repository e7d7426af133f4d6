// olmo2: Llama's projections without biases, RMSNorm on the full q and k projections
// (q_norm over heads x head_dim, k_norm over kv_heads x head_dim), and norms after each sublayer
// only (post_attention_layernorm, post_feedforward_layernorm; no input norm). Olmo2RMSNorm
// multiplies the weight into the fp32 normalized tensor
// (transformers/models/olmo2/modeling_olmo2.py, configuration_olmo2.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_olmo2(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 50304,
               .hidden = 4096,
               .layers = 32,
               .heads = 32,
               .intermediate = 11008,
               .max_positions = 2048,
               .head_dim = {},
               .tied = false,
               .activation = Activation::silu},
              s);
  s.norm = NormKind::rms_norm_fp32;
  s.norm_placement = NormPlacement::post;
  s.qk_norm = QkNorm::full_width;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
}

}  // namespace trainmem::adapters

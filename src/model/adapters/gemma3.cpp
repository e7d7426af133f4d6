// gemma3_text: Gemma 2's four norms plus q/k norms; defaults from Gemma3TextConfig
// (vocab 262208, 26 layers, 8 heads, 4 KV heads, head_dim 256), which the multimodal gemma3
// config's text_config relies on (ecosystem.md 1.1 rule 2).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_gemma3_text(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 262208,
               .hidden = 2304,
               .layers = 26,
               .heads = 8,
               .intermediate = 9216,
               .max_positions = 131072,
               .head_dim = 256,
               .tied = true,
               .activation = Activation::gelu_tanh},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 4;
  s.norm = NormKind::rms_norm_fp32;
  s.norm_placement = NormPlacement::sandwich;
  s.qk_norm = QkNorm::per_head;
  s.attn_softcap = r.number("attn_logit_softcapping", 0.0);
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
  s.logit_softcap = r.number("final_logit_softcapping", 0.0);
}

}  // namespace trainmem::adapters

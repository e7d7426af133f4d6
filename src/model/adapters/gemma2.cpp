// gemma2: four RMSNorms per layer (the weight multiplies the fp32 normalized tensor), head_dim
// 256, tied embeddings by class default (configs do not store tie_word_embeddings), a final logit
// soft-cap and an attention soft-cap, eager attention only, gelu_pytorch_tanh
// (configuration_gemma2.py, modeling_gemma2.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {

void read_gemma2(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 256000,
               .hidden = 2304,
               .heads = 8,
               .intermediate = 9216,
               .max_positions = 8192,
               .head_dim = 256,
               .tied = true,
               .activation = Activation::gelu_tanh},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 4;
  s.norm = NormKind::rms_norm_fp32;
  s.norm_placement = NormPlacement::sandwich;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
  s.logit_softcap = r.number("final_logit_softcapping", 30.0);
  s.attn_softcap = r.number("attn_logit_softcapping", 50.0);
  // Gemma2PreTrainedModel._supports_sdpa = False ("sdpa does not support softcapping").
  s.sdpa_supported = false;
  // Without layer_types, Gemma2Config alternates sliding and full layers, sliding first
  // (configuration_gemma2.py: "sliding_attention" if bool((i + 1) % 2)); not every layer slides.
  if (s.sliding_layers.empty() && s.sliding_window > 0) {
    s.sliding_layers = sliding_layers_from_pattern(s.layers, 2);
  }
}

}  // namespace trainmem::adapters

// gemma2: four RMSNorms per layer (the weight multiplies the fp32 normalized tensor), head_dim
// 256, tied embeddings by class default (configs do not store tie_word_embeddings), a final logit
// soft-cap and an attention soft-cap, eager attention only, gelu_pytorch_tanh
// (configuration_gemma2.py, modeling_gemma2.py).
#include "model/adapters/adapters.h"

namespace trainmem::adapters {
namespace {

// Gemma2Config's window defaults (configuration_gemma2.py).
constexpr std::int64_t kDefaultWindow = 4096;
constexpr std::int64_t kDefaultPattern = 2;  // layer_types: sliding, full, sliding, ...

}  // namespace

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
  // Gemma2Config: sliding_window 4096 and, without layer_types, sliding and full layers
  // alternating, sliding first (configuration_gemma2.py "sliding_attention" if bool((i + 1) % 2)).
  read_window_defaults(r, s, kDefaultWindow, kDefaultPattern);
}

}  // namespace trainmem::adapters

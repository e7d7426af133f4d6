// gpt_oss (gpt-oss-20b, gpt-oss-120b): pre-norm RMSNorm layers with q/k/v/o biases and a learned
// attention sink per head, alternating sliding-window (128) and full attention, and a routed
// mixture of experts with biases, a router with a bias whose softmax runs over the top-k logits,
// and the clamped SwiGLU gate (transformers models/gpt_oss/modeling_gpt_oss.py,
// configuration_gpt_oss.py). transformers has no SDPA path for the sinks (_supports_sdpa = False):
// asked for sdpa it runs eager attention, whose softmax runs in the hidden dtype.
#include "model/adapters/adapters.h"

namespace trainmem::adapters {
namespace {

// GptOssConfig's defaults (configuration_gpt_oss.py).
constexpr std::int64_t kDefaultWindow = 128;
constexpr std::int64_t kDefaultPattern = 2;  // layer_types: sliding, full, sliding, ...

}  // namespace

void read_gpt_oss(ConfigReader& r, ModelSpec& s) {
  read_common(r,
              {.vocab = 201088,
               .hidden = 2880,
               .heads = 64,
               .intermediate = 2880,
               .max_positions = 131072,
               .head_dim = 64,
               .tied = false,
               .activation = Activation::silu},
              s);
  if (!r.has("num_key_value_heads")) s.kv_heads = 8;
  // GptOssRMSNorm returns (weight * x_normed).to(input_dtype): the weight mul runs in fp32 and
  // saves the fp32 normalized tensor, as Gemma's does (CPU storages of a gpt_oss-tiny step,
  // validation/data/families.jsonl: -1.3 % while priced as Llama's bf16 mul).
  s.norm = NormKind::rms_norm_fp32;
  s.qkv_bias = s.o_bias = r.flag("attention_bias", true);
  s.attention_sinks = true;
  s.sdpa_supported = false;
  s.eager_softmax_fp32 = false;
  read_window_defaults(r, s, kDefaultWindow, kDefaultPattern);
  // Only the experts have an MLP: their biases are the MLP biases, and hidden_act ("silu" in the
  // published configs) is not what they run.
  s.moe.experts = r.count("num_local_experts", 128);
  s.moe.top_k = r.count("num_experts_per_tok", 4);
  s.moe.expert_intermediate = s.intermediate;
  s.moe.router_bias = true;
  s.moe.softmax_after_topk = true;
  s.mlp_bias = true;
  s.activation = Activation::clamped_swiglu;
}

}  // namespace trainmem::adapters

// A model_type trainmem has no adapter for. Its config is read through the standard Hugging Face
// keys every decoder config carries (PretrainedConfig conventions: vocab_size, hidden_size,
// num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size,
// tie_word_embeddings, attention_bias, mlp_bias, hidden_act; MoE: num_local_experts /
// num_experts, num_experts_per_tok, moe_intermediate_size) as the closest known layer shape, a
// Llama decoder layer (pre-norm RMSNorm, q/k/v/o, gated MLP) or its Mixtral-style MoE variant.
// Weights, gradients and optimizer state are exact when the layout matches (and always exact from
// safetensors headers); activations are an estimate, said so in a note (src/io/config.cpp).
#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "model/adapters/adapters.h"

namespace trainmem::adapters {

namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// An encoder (bidirectional attention, a masked-LM or classification head): transformers'
// encoder families, or an architecture name only encoders have.
bool is_encoder(ConfigReader& r, std::string_view model_type) {
  for (std::string_view t :
       {"bert",          "roberta", "xlm-roberta",   "deberta",    "deberta-v2",  "electra",
        "distilbert",    "albert",  "mpnet",         "modernbert", "camembert",   "ernie",
        "nomic_bert",    "xlm",     "flaubert",      "funnel",     "longformer",  "big_bird",
        "convbert",      "rembert", "megatron-bert", "mobilebert", "squeezebert", "roformer",
        "data2vec-text", "esm",     "nezha",         "xmod",       "luke",        "canine"}) {
    if (model_type == t) return true;
  }
  for (const std::string& a : r.strings("architectures")) {
    if (contains(a, "ForMaskedLM") || contains(a, "ForTokenClassification") ||
        contains(a, "ForMultipleChoice")) {
      return true;
    }
  }
  return false;
}

// Layers that are not attention (Mamba/state-space, recurrent, linear attention, convolution),
// alone or interleaved with attention: their families, their configs' own keys, or a layer_types
// entry other than an attention kind.
std::string non_attention_layers(ConfigReader& r, std::string_view model_type) {
  for (std::string_view t :
       {"mamba", "mamba2", "falcon_mamba", "jamba", "zamba", "zamba2", "falcon_h1", "bamba",
        "nemotron_h", "granitemoehybrid", "rwkv", "rwkv5", "rwkv6", "rwkv7", "recurrent_gemma",
        "xlstm", "lfm2", "qwen3_next", "minimax"}) {
    if (model_type == t) return std::string(t);
  }
  for (const char* key :
       {"ssm_cfg", "mamba_d_state", "mamba_expand", "attn_layer_period", "layers_block_type",
        "hybrid_override_pattern", "ssm_state_size", "time_step_rank", "linear_num_value_heads"}) {
    if (r.has(key)) return key;
  }
  for (const std::string& kind : r.strings("layer_types")) {
    if (!contains(kind, "attention") && kind != "global" && kind != "local") {
      return "layer_types: " + kind;
    }
  }
  return "";
}

}  // namespace

void read_generic(ConfigReader& r, ModelSpec& s) {
  if (r.flag("is_encoder_decoder", false)) {
    r.fail("is_encoder_decoder", "encoder-decoder models are not modelled (decoder-only only)");
    return;
  }
  // The Llama layer below would price another model: refused, not estimated.
  if (is_encoder(r, s.model_type)) {
    r.fail("model_type", fmt::format("'{}' is an encoder (bidirectional, masked-LM head); "
                                     "trainmem prices decoder-only language models",
                                     s.model_type));
    return;
  }
  if (const std::string why = non_attention_layers(r, s.model_type); !why.empty()) {
    r.fail("model_type",
           fmt::format("'{}' has layers that are not attention ({}: state-space, recurrent, "
                       "linear-attention or convolution layers); trainmem prices transformer "
                       "decoders, and a Llama layer in their place would be another model",
                       s.model_type, why));
    return;
  }
  read_common(r,
              {.vocab = {},
               .hidden = {},
               .heads = {},
               .intermediate = {},
               .max_positions = {},
               .head_dim = {},
               .tied = false,
               .activation = Activation::silu},
              s);
  s.qkv_bias = s.o_bias = r.flag("attention_bias", false);
  s.mlp_bias = r.flag("mlp_bias", false);
  if (r.has("attn_implementation") && !r.is_null("attn_implementation")) {
    s.config_attention = r.text("attn_implementation");
  }
  const bool moe = r.has("num_local_experts") || r.has("num_experts") || r.has("n_routed_experts");
  // The generic MoE layer is Mixtral's: every layer routed, no shared expert. A config that says
  // otherwise (Llama 4's shared expert and interleaved dense layers, DeepSeek-style first dense
  // layers, Qwen-MoE's dense layers) would be priced as another model.
  if (moe) {
    // Each key with the value that keeps Mixtral's layout: no shared expert, every layer MoE;
    // kNone: no value keeps it (present at all, the layout is another).
    constexpr double kNone = -1.0;
    for (const auto& [key, plain] :
         {std::pair{"n_shared_experts", 0.0}, std::pair{"num_shared_experts", 0.0},
          std::pair{"shared_expert_intermediate_size", 0.0},
          std::pair{"intermediate_size_mlp", kNone}, std::pair{"interleave_moe_layer_step", 1.0},
          std::pair{"first_k_dense_replace", 0.0}, std::pair{"moe_layer_freq", 1.0},
          std::pair{"decoder_sparse_step", 1.0}, std::pair{"mlp_only_layers", kNone}}) {
      if (!r.has(key) || r.is_null(key) || r.is_empty_list(key)) continue;
      if (plain != kNone && r.number(key, plain) == plain) continue;
      r.fail(key, fmt::format("an MoE layout with shared experts or dense layers; without an "
                              "adapter for '{}' every layer would be priced as Mixtral's "
                              "(all routed, no shared expert)",
                              s.model_type));
      return;
    }
    s.moe.experts = r.count_any({"num_local_experts", "num_experts", "n_routed_experts"});
    s.moe.top_k = r.count("num_experts_per_tok");
    s.moe.expert_intermediate =
        r.has("moe_intermediate_size") ? r.count("moe_intermediate_size") : s.intermediate;
  }
  s.estimated_from = moe ? "mixtral (Llama attention, routed gated-MLP experts)"
                         : "llama (pre-norm RMSNorm, q/k/v/o attention, gated MLP)";
}

}  // namespace trainmem::adapters

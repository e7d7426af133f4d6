#include "model/adapters/config_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trainmem/plan.h"
#include "util/json_text.h"

namespace trainmem::adapters {

using nlohmann::json;

bool ConfigReader::has(const std::string& key) const {
  return config_.contains(key) && !config_[key].is_null();
}

bool ConfigReader::is_null(const std::string& key) const {
  return config_.contains(key) && config_[key].is_null();
}

std::vector<std::string> ConfigReader::strings(const std::string& key) {
  std::vector<std::string> out;
  if (!has(key)) return out;
  const json& v = config_[key];
  if (!v.is_array()) {
    fail(key, fmt::format("must be a list of strings, got {}", v.dump()));
    return out;
  }
  for (const json& item : v) {
    if (!item.is_string()) {
      fail(key, fmt::format("must be a list of strings, holds {}", item.dump()));
      return {};
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

bool ConfigReader::is_empty_list(const std::string& key) const {
  return has(key) && config_[key].is_array() && config_[key].empty();
}

void ConfigReader::fail(const std::string& key, const std::string& reason) {
  if (!error_) error_ = bad_input(file_, path_ + key, reason);
}

std::int64_t ConfigReader::count(const std::string& key, std::optional<std::int64_t> fallback) {
  return count_any({key}, fallback);
}

std::int64_t ConfigReader::count_any(const std::vector<std::string>& keys,
                                     std::optional<std::int64_t> fallback) {
  for (const std::string& key : keys) {
    if (!has(key)) continue;
    const json& v = config_[key];
    if (!v.is_number_integer()) {
      fail(key, fmt::format("must be a positive integer, got {}", json_excerpt(v)));
      return 0;
    }
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX) {
      fail(key, fmt::format("must be a positive integer up to 2^52, got {}", json_excerpt(v)));
      return 0;
    }
    const auto n = v.get<std::int64_t>();
    // One dimension alone may not pass the largest figure trainmem prices (limits.h); products
    // of dimensions are checked by check_plan_size().
    if (n <= 0 || n > kMaxFigureElements) {
      fail(key, fmt::format("must be a positive integer up to 2^52, got {}", n));
      return 0;
    }
    return n;
  }
  if (fallback) {
    defaulted_.push_back(fmt::format("{} = {}", keys.front(), *fallback));
    return *fallback;
  }
  fail(keys.front(),
       "is missing: every config.json transformers writes has it, and a default would price "
       "another model");
  return 0;
}

std::int64_t ConfigReader::optional_count(const std::string& key, std::int64_t fallback) {
  if (!has(key)) {
    if (!is_null(key)) defaulted_.push_back(fmt::format("{} = {}", key, fallback));
    return fallback;
  }
  const json& v = config_[key];
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX) ||
      v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > kMaxFigureElements) {
    fail(key, fmt::format("must be a non-negative integer, got {}", json_excerpt(v)));
    return fallback;
  }
  return v.get<std::int64_t>();
}

bool ConfigReader::flag(const std::string& key, bool fallback) {
  if (!has(key)) {
    defaulted_.push_back(fmt::format("{} = {}", key, fallback));
    return fallback;
  }
  if (!config_[key].is_boolean()) {
    fail(key, fmt::format("must be true or false, got {}", json_excerpt(config_[key])));
    return fallback;
  }
  return config_[key].get<bool>();
}

std::string ConfigReader::text(const std::string& key) {
  if (!has(key)) return "";
  if (!config_[key].is_string()) {
    fail(key, fmt::format("must be a string, got {}", config_[key].dump()));
    return "";
  }
  return config_[key].get<std::string>();
}

double ConfigReader::number(const std::string& key, double fallback) {
  if (!has(key)) return fallback;
  if (!config_[key].is_number()) {
    fail(key, fmt::format("must be a number, got {}", json_excerpt(config_[key])));
    return fallback;
  }
  if (!std::isfinite(config_[key].get<double>())) {
    fail(key, "must be a finite number");
    return fallback;
  }
  return config_[key].get<double>();
}

void read_common(ConfigReader& r, const CommonDefaults& d, ModelSpec& spec) {
  // A null width is no default: the config class keeps None and the model cannot be built.
  for (const char* key :
       {"vocab_size", "hidden_size", "num_attention_heads", "intermediate_size"}) {
    if (r.is_null(key)) r.fail(key, "is null: the model's width cannot be built from None");
  }
  // num_hidden_layers is required (see the header); the rest fall back to the class defaults.
  spec.vocab = r.count("vocab_size", d.vocab);
  spec.hidden = r.count("hidden_size", d.hidden);
  spec.layers = r.count("num_hidden_layers");
  spec.heads = r.count("num_attention_heads", d.heads);
  // Absent num_key_value_heads means multi-head attention (ecosystem.md 1.1 rule 5).
  spec.kv_heads = r.count("num_key_value_heads", spec.heads);
  spec.intermediate = r.count("intermediate_size", d.intermediate);
  spec.max_positions = r.optional_count("max_position_embeddings", d.max_positions.value_or(0));
  // An explicit head_dim wins (Qwen3-0.6B: 16 x 128 != 1024); else hidden / heads.
  if (r.has("head_dim")) {
    spec.head_dim = r.count("head_dim");
  } else if (d.head_dim) {
    spec.head_dim = *d.head_dim;
  } else if (spec.heads > 0) {
    spec.head_dim = spec.hidden / spec.heads;
  }
  spec.tied_embeddings = r.flag("tie_word_embeddings", d.tied);
  spec.attention_dropout = read_probability(r, "attention_dropout", 0.0);
  spec.activation = read_activation(r, "hidden_act", d.activation);
  // Qwen2 keeps sliding_window in configs that set use_sliding_window false: no window then.
  // Families without either key (Llama) have no window, which is no default worth a note.
  const bool windowed = !r.has("use_sliding_window") || r.flag("use_sliding_window", true);
  if (windowed && r.has("sliding_window")) {
    spec.sliding_window = r.optional_count("sliding_window", 0);
  }
  if (r.has("layer_types")) {
    // configuration_utils.py layer_type_validation: one entry per layer. Attention-free kinds
    // (mamba, linear_attention) are refused by the generic reader before this.
    const std::vector<std::string> types = r.strings("layer_types");
    for (const std::string& t : types) {
      if (t != "full_attention" && t != "sliding_attention" && t != "chunked_attention") {
        r.fail("layer_types", fmt::format("'{}' is not a layer kind trainmem prices "
                                          "(full_attention, sliding_attention, chunked_attention)",
                                          text_excerpt(t)));
      }
      spec.sliding_layers.push_back(t == "sliding_attention");
    }
    if (static_cast<std::int64_t>(types.size()) != spec.layers) {
      r.fail("layer_types",
             fmt::format("has {} entries, but num_hidden_layers is {}: one per layer", types.size(),
                         spec.layers));
    }
  } else if (spec.sliding_window > 0 && r.has("sliding_window_pattern")) {
    // Configs written before layer_types (Gemma 3, Cohere2): every pattern-th layer is full
    // attention (configuration_gemma3.py / configuration_cohere2.py: "sliding_attention" if
    // bool((i + 1) % sliding_window_pattern) else "full_attention").
    spec.sliding_layers =
        sliding_layers_from_pattern(spec.layers, r.count("sliding_window_pattern"));
  }
}

void read_window_defaults(ConfigReader& r, ModelSpec& spec, std::int64_t window,
                          std::int64_t pattern) {
  if (!r.has("sliding_window") && !r.is_null("sliding_window")) spec.sliding_window = window;
  if (!spec.sliding_layers.empty() || spec.sliding_window <= 0) return;
  const std::int64_t every =
      r.has("sliding_window_pattern") ? r.count("sliding_window_pattern") : pattern;
  spec.sliding_layers = sliding_layers_from_pattern(spec.layers, every);
}

std::vector<bool> sliding_layers_from_pattern(std::int64_t layers, std::int64_t pattern) {
  std::vector<bool> out;
  // Bounded by the layer limit check_common enforces later (a hostile count is refused there).
  for (std::int64_t i = 0; pattern > 0 && i < std::min(layers, kMaxLayers); ++i) {
    out.push_back((i + 1) % pattern != 0);
  }
  return out;
}

Activation read_activation(ConfigReader& r, const std::string& key, Activation fallback) {
  if (!r.has(key)) return fallback;
  const std::string name = r.text(key);
  // transformers activations.py ACT2CLS names (swish is nn.SiLU; gelu_python is exact gelu).
  static constexpr std::pair<std::string_view, Activation> kNames[] = {
      {"silu", Activation::silu},
      {"swish", Activation::silu},
      {"gelu", Activation::gelu},
      {"gelu_python", Activation::gelu},
      {"gelu_pytorch_tanh", Activation::gelu_tanh},
      {"gelu_new", Activation::gelu_new},
      {"gelu_accurate", Activation::gelu_new},
      {"gelu_fast", Activation::gelu_fast},
      {"quick_gelu", Activation::quick_gelu},
      {"relu", Activation::relu},
  };
  for (const auto& [n, act] : kNames) {
    if (name == n) return act;
  }
  if (!name.empty()) {
    r.fail(key, fmt::format("activation '{}' is not modelled (supported: silu, swish, gelu, "
                            "gelu_python, gelu_pytorch_tanh, gelu_new, gelu_accurate, gelu_fast, "
                            "quick_gelu, relu)",
                            name));
  }
  return fallback;
}

double read_probability(ConfigReader& r, const std::string& key, double fallback) {
  const double p = r.number(key, fallback);
  if (p < 0 || p >= 1) {
    r.fail(key, fmt::format("must be a probability in [0, 1), got {}", p));
    return fallback;
  }
  return p;
}

void check_common(ConfigReader& r, const ModelSpec& spec) {
  if (r.error()) return;
  // Work per layer and per expert is bounded by what a model could be (limits.h).
  if (spec.layers > kMaxLayers) {
    r.fail("num_hidden_layers",
           fmt::format("{} layers: no published decoder has more than a few hundred (limit {})",
                       spec.layers, kMaxLayers));
  }
  if (spec.moe.experts > kMaxExperts) {
    r.fail("num_experts", fmt::format("{} experts per layer is past any published model (limit {})",
                                      spec.moe.experts, kMaxExperts));
  }
  if (spec.mtp_layers > kMaxLayers) {
    r.fail("num_nextn_predict_layers",
           fmt::format("{} is past the limit of {} layers", spec.mtp_layers, kMaxLayers));
  }
  if (!r.has("head_dim") && spec.hidden % spec.heads != 0 && !spec.mla) {
    r.fail("num_attention_heads", fmt::format("{} heads do not divide hidden_size {} and no "
                                              "head_dim is given",
                                              spec.heads, spec.hidden));
  }
  if (spec.kv_heads > spec.heads || spec.heads % spec.kv_heads != 0) {
    r.fail("num_key_value_heads", fmt::format("{} key/value heads must divide {} attention heads",
                                              spec.kv_heads, spec.heads));
  }
  if (spec.moe.experts > 0 && (spec.moe.top_k < 1 || spec.moe.top_k > spec.moe.experts)) {
    r.fail("num_experts_per_tok", fmt::format("top-k {} must be between 1 and {} experts",
                                              spec.moe.top_k, spec.moe.experts));
  }
}

}  // namespace trainmem::adapters

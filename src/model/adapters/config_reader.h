// ConfigReader: typed access to a config.json object that remembers the first problem, so an
// adapter reads straight through and the caller gets one clear error naming file and key.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/model.h"

namespace trainmem::adapters {

class ConfigReader {
 public:
  // `path`: where `config` sits in the file ("text_config." for a multimodal wrapper's language
  // model), put before every key an error names.
  ConfigReader(const nlohmann::json& config, std::string file, std::string path = "")
      : config_(config), file_(std::move(file)), path_(std::move(path)) {}

  // A positive integer that must be present (or have a family default given as `fallback`).
  std::int64_t count(const std::string& key, std::optional<std::int64_t> fallback = std::nullopt);
  // The first present key among `keys` (aliases such as n_embd / hidden_size).
  std::int64_t count_any(const std::vector<std::string>& keys,
                         std::optional<std::int64_t> fallback = std::nullopt);
  // A non-negative integer, absent -> fallback (no error).
  std::int64_t optional_count(const std::string& key, std::int64_t fallback);
  bool flag(const std::string& key, bool fallback);
  double number(const std::string& key, double fallback);
  std::string text(const std::string& key);  // a string value; absent -> ""
  bool has(const std::string& key) const;
  bool is_null(const std::string& key) const;
  bool is_empty_list(const std::string& key) const;          // present, an array, and empty
  std::vector<std::string> strings(const std::string& key);  // a list of strings; absent -> {}

  // Records a problem found by a cross-field check.
  void fail(const std::string& key, const std::string& reason);
  const std::optional<Error>& error() const { return error_; }
  // "key = value" for every key absent from the file and filled with the family's default (the
  // value transformers' config class uses), in reading order.
  const std::vector<std::string>& defaulted() const { return defaulted_; }
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json& config_;
  std::string file_;
  std::string path_;
  std::optional<Error> error_;
  std::vector<std::string> defaulted_;
};

// Fills the fields every decoder shares (vocab, hidden, layers, heads, kv heads, head_dim,
// intermediate, tying, dtype). num_hidden_layers must be present: save_pretrained writes every
// attribute, so a file without it was not written by transformers, and the class default (32
// layers) would silently price another model. Other absent keys take the family's defaults (the
// values of transformers' config class) and are listed by defaulted().
struct CommonDefaults {
  std::optional<std::int64_t> vocab, hidden, heads, intermediate, max_positions;
  std::optional<std::int64_t> head_dim;      // nullopt: hidden / heads
  bool tied = false;                         // the config class's tie_word_embeddings default
  Activation activation = Activation::silu;  // the config class's hidden_act default
};
void read_common(ConfigReader& r, const CommonDefaults& d, ModelSpec& spec);

// Which layers slide when a config gives sliding_window_pattern instead of layer_types: all but
// every pattern-th (configuration_gemma3.py / configuration_cohere2.py). Empty for pattern <= 0.
std::vector<bool> sliding_layers_from_pattern(std::int64_t layers, std::int64_t pattern);

// A config class that always has a window (Gemma2Config, Cohere2Config, GptOssConfig): its
// `window` when the file names none (an explicit null: no window), and without layer_types every
// `pattern`-th layer full (the file's sliding_window_pattern when it gives one).
void read_window_defaults(ConfigReader& r, ModelSpec& spec, std::int64_t window,
                          std::int64_t pattern);

// The MLP activation named by `key` (hidden_act, activation_function, hidden_activation) as
// transformers' ACT2FN spells it; absent -> fallback; a name trainmem does not model fails.
Activation read_activation(ConfigReader& r, const std::string& key, Activation fallback);

// A probability in [0, 1) (dropout keys); absent -> fallback.
double read_probability(ConfigReader& r, const std::string& key, double fallback);

// Checks shared by all families: heads divide, widths positive. Reports via r.fail().
void check_common(ConfigReader& r, const ModelSpec& spec);

}  // namespace trainmem::adapters

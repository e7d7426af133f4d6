// --from FILE: read, flatten, detect the format, apply its rules.
#include <fmt/format.h>
#if TRAINMEM_HAVE_YAML
#include <yaml-cpp/yaml.h>
#endif

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/import/formats.h"
#include "io/import/rules.h"
#include "io/json_parse.h"
#include "io/read_file.h"
#include "util/boolean.h"

namespace trainmem::io {
namespace {

// Real configs have a few hundred keys at most. A YAML file whose anchors nest aliases of maps
// ("billion laughs") flattens to exponentially many keys; past this the file is refused.
constexpr std::size_t kMaxFlatKeys = 10'000;

void flatten_json(const nlohmann::json& j, const std::string& prefix, FlatConfig& out) {
  if (out.size() > kMaxFlatKeys) return;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      flatten_json(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (j.is_array()) {
    std::string joined;
    for (const auto& v : j) {
      joined += (joined.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    out[prefix] = joined;
    out[prefix + std::string(kListMark)] = "";
  } else if (j.is_string()) {
    out[prefix] = j.get<std::string>();
  } else if (j.is_null()) {
    out[prefix] = "null";
  } else {
    out[prefix] = j.dump();
  }
}

#if TRAINMEM_HAVE_YAML
void flatten_yaml(const YAML::Node& n, const std::string& prefix, FlatConfig& out) {
  if (out.size() > kMaxFlatKeys) return;
  switch (n.Type()) {
    case YAML::NodeType::Map:
      for (const auto& kv : n) {
        const std::string k = kv.first.as<std::string>();
        flatten_yaml(kv.second, prefix.empty() ? k : prefix + "." + k, out);
      }
      break;
    case YAML::NodeType::Sequence: {
      std::string joined;
      for (const auto& v : n) {
        if (v.IsScalar()) joined += (joined.empty() ? "" : ",") + v.as<std::string>();
      }
      out[prefix] = joined;
      out[prefix + std::string(kListMark)] = "";
      break;
    }
    case YAML::NodeType::Scalar:
      out[prefix] = n.as<std::string>();
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out[prefix] = "null";
      break;
  }
}

// Documents in a YAML stream: a "---" line (alone or before content) starts one, except the first
// when nothing but comments and blank lines precede it.
std::size_t yaml_documents(const std::string& text) {
  std::size_t documents = 0;
  bool content = false;  // the current document has a line of its own
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line(text.data() + at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool marker =
        line.starts_with("---") && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
    if (marker) {
      if (content || documents == 0) ++documents;
      content = line.size() > 3 && line.find_first_not_of(" \t", 3) != std::string_view::npos;
    } else if (!line.empty() && line.find_first_not_of(" \t") != std::string_view::npos &&
               line[line.find_first_not_of(" \t")] != '#') {
      if (documents == 0) documents = 1;
      content = true;
    }
    at = end + 1;
  }
  return documents;
}
#endif

Result<FlatConfig> too_many_keys(FlatConfig flat, const std::string& file) {
  if (flat.size() > kMaxFlatKeys) {
    return bad_input(file, "",
                     fmt::format("has more than {} keys (nested aliases?): not a config this "
                                 "reads",
                                 kMaxFlatKeys));
  }
  return flat;
}

std::vector<const ImportFormat*> formats() {
  return {&trl_format(),       &peft_format(),          &bitsandbytes_format(),
          &axolotl_format(),   &llama_factory_format(), &torchtune_format(),
          &deepspeed_format(), &accelerate_format()};
}

}  // namespace

Result<FlatConfig> flatten_config(const std::string& text, const std::string& file) {
  FlatConfig flat;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    auto parsed = parse_json(text, file);  // depth cap, 1e400, syntax: one-line errors
    if (!parsed) return parsed.error();
    if (!parsed->is_object()) return bad_input(file, "", "is a JSON value but not an object");
    flatten_json(parsed.value(), "", flat);
    return too_many_keys(flat, file);
  }
#if TRAINMEM_HAVE_YAML
  try {
    // PyYAML's safe_load, which the tools load their configs with, refuses a stream of several
    // documents ("expected a single document in the stream"); reading the first would hide the
    // rest. Counted from the "---" markers, so no later document is ever built.
    if (const std::size_t n = yaml_documents(text); n > 1) {
      return bad_input(file, "",
                       fmt::format("holds {} YAML documents (--- separators); a config is one", n));
    }
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return bad_input(file, "", "is neither a JSON object nor a YAML mapping");
    flatten_yaml(root, "", flat);
  } catch (const YAML::Exception& e) {  // DeepRecursion past yaml-cpp's depth guard too
    return bad_input(file, "", fmt::format("not valid YAML: {}", e.what()));
  }
  return too_many_keys(flat, file);
#else
  // The web page's WebAssembly build has no yaml-cpp (web/CMakeLists.txt): JSON only.
  return bad_input(file, "", "YAML is read by the command line and the Python package, not here");
#endif
}

bool is_true(const std::string& value) {
  return parse_boolean(value) == std::optional<bool>(true);
}

bool is_false(const std::string& value) {
  return parse_boolean(value) == std::optional<bool>(false);
}

bool is_unset(const std::string& value) {
  return value == "auto" || value == "null" || value == "~" || value.empty();
}

// Boolean keys no tool runs together, whichever format names them (last one no longer wins):
// transformers training_args.py "At most one of fp16 and bf16 can be True", DeepSpeed's
// "bf16 and fp16 modes cannot be simultaneously enabled", BitsAndBytesConfig's "load_in_4bit and
// load_in_8bit are both True, but only one can be used at the same time".
std::optional<Error> refuse_exclusive_pair(const FlatConfig& c, const std::string& file) {
  static constexpr std::pair<std::string_view, std::string_view> kPairs[] = {
      {"bf16", "fp16"},
      {"bf16.enabled", "fp16.enabled"},
      {"load_in_4bit", "load_in_8bit"},
      {"quantization_config.load_in_4bit", "quantization_config.load_in_8bit"},
  };
  auto on = [&](std::string_view key) {
    const auto it = c.find(std::string(key));
    return it != c.end() && is_true(it->second);
  };
  for (const auto& [a, b] : kPairs) {
    if (on(a) && on(b)) {
      return bad_input(file, std::string(b),
                       fmt::format("{} and {} are both true; the tools that read them refuse "
                                   "to run both: keep one",
                                   a, b));
    }
  }
  return std::nullopt;
}

std::optional<std::string> if_true(const std::string& value, const std::string& setting_value) {
  if (is_true(value)) return setting_value;
  return std::nullopt;
}

}  // namespace trainmem::io

namespace trainmem {

using io::FlatConfig;
using io::ImportFormat;
using io::ImportRule;

Result<ImportedConfig> import_config_text(const std::string& text, const std::string& file) {
  auto flat = io::flatten_config(text, file);
  if (!flat) return flat.error();
  const ImportFormat* best = nullptr;
  int best_score = 0;
  std::string tried;
  for (const ImportFormat* f : io::formats()) {
    tried += (tried.empty() ? "" : ", ") + f->name;
    const int score = f->detect(flat.value());
    if (score > best_score) {
      best = f;
      best_score = score;
    }
  }
  if (best == nullptr) {
    return bad_input(file, "", fmt::format("not a config trainmem can read (tried: {})", tried));
  }
  ImportedConfig out;
  out.file = file;
  out.format = best->name;
  for (const auto& [key, value] : flat.value()) {
    if (key.ends_with(io::kListMark)) continue;
    const bool list = flat->contains(key + std::string(io::kListMark));
    bool known = false;
    bool used = false;       // a rule of this key set something
    bool unchanged = false;  // a rule of this key read it and set nothing (bf16: false)
    for (const ImportRule& rule : best->rules) {
      if (rule.key != key) continue;
      known = true;
      if (rule.why_ignored == io::rules::kReadForTheLayout) {
        out.for_layout.push_back(key);
        continue;
      }
      if (!rule.why_ignored.empty()) {
        if (io::is_unset(value) || (!rule.inert.empty() && value == rule.inert)) {
          unchanged = true;
          continue;
        }
        out.ignored.push_back(fmt::format("{} ({})", key, rule.why_ignored));
        continue;
      }
      if (io::is_unset(value) && !rule.when_unset.empty()) {
        used = true;
        out.used.push_back(fmt::format("{} = {} ({})", key, value, rule.when_unset));
        continue;
      }
      if (rule.boolean && !io::is_unset(value) && !parse_boolean(value)) {
        return bad_input(file, key, fmt::format("'{}' is not true or false", value));
      }
      const std::optional<std::string> v = io::is_unset(value) ? std::nullopt : rule.convert(value);
      if (!v) {
        unchanged = true;
        continue;
      }
      if (list && !setting_takes_list(rule.setting)) {
        return bad_input(file, key,
                         fmt::format("is a list ([{}]); {} takes one value", value, rule.setting));
      }
      used = true;
      if (rule.setting == "model") {
        out.model = *v;
      } else {
        out.patch.push_back({rule.setting, *v, fmt::format("{}: {}", file, key), true});
      }
      out.used.push_back(fmt::format("{} = {} -> {} {}", key, value, rule.setting, *v));
    }
    // One "no change" line for a key several rules read (load_in_8bit: method and quant).
    if (unchanged && !used) out.used.push_back(fmt::format("{} = {} (no change)", key, value));
    if (!known) out.ignored.push_back(key);
  }
  if (auto e = io::refuse_exclusive_pair(flat.value(), file)) return *e;
  if (best->refuse) {
    if (auto e = best->refuse(flat.value(), file)) return *e;
  }
  if (best->finish) best->finish(flat.value(), out);
  return out;
}

Result<std::string> read_training_config(const std::string& path) {
  std::error_code missing;
  if (!std::filesystem::exists(path, missing)) {
    return bad_input(path, "--from", "cannot read the file");
  }
  // A training config is a few KiB: one past the config cap is refused before it is parsed.
  return io::read_regular_file(path, io::kMaxConfigBytes, "a training config");
}

Result<ImportedConfig> import_config(const std::string& path) {
  auto text = read_training_config(path);
  if (!text) return text.error();
  return import_config_text(text.value(), path);
}

}  // namespace trainmem

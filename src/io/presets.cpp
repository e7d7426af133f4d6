// Presets: config.json contents plus published counts, embedded from data/models/*.json.
#include "io/presets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>

#include "trainmem/model.h"
#include "util/edit_distance.h"
#include "util/embedded_data.h"

namespace trainmem {
namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct Preset {
  PresetInfo info;
  std::string_view text;
  std::string path;
  // Other repository ids with the same config.json shapes ("google/gemma-3-4b-it" for
  // "google/gemma-3-4b-pt"), lower-case; the preset file's optional "aliases".
  std::vector<std::string> aliases;
};

Preset read_preset(const EmbeddedFile& f) {
  // Only the header fields are built: the parser skips the DOM of "config", which load_preset()
  // parses for the one preset asked for.
  static const json::parser_callback_t header_only = [](int depth, json::parse_event_t event,
                                                        json& parsed) {
    return !(depth == 1 && event == json::parse_event_t::key && parsed == "config");
  };
  const json j = json::parse(f.contents, header_only);  // our own data, checked by a test
  PresetInfo info{j.at("id").get<std::string>(), j.at("hf_id").get<std::string>(),
                  j.at("published").get<std::string>(),
                  j.at("published_params").get<std::int64_t>()};
  std::vector<std::string> aliases;
  for (const json& a : j.value("aliases", json::array())) {
    aliases.push_back(lower(a.get<std::string>()));
  }
  return {std::move(info), f.contents, std::string(f.path), std::move(aliases)};
}

// Every preset, read once per process, sorted by id.
const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = [] {
    std::vector<Preset> out;
    for (const EmbeddedFile& f : embedded_files()) {
      if (f.path.rfind("models/", 0) == 0) out.push_back(read_preset(f));
    }
    std::sort(out.begin(), out.end(),
              [](const Preset& a, const Preset& b) { return a.info.id < b.info.id; });
    return out;
  }();
  return all;
}

// The preset a lower-cased id or HF id names. A preset's file is models/<id>.json, so the id or
// the HF id's last part ("qwen/qwen3-8b" -> qwen3-8b.json) is tried first and only that file is
// read; the rest are read only when it misses (an id that is not the HF name's tail).
std::optional<Preset> find_preset(const std::string& key) {
  const auto matches = [&key](const Preset& p) {
    return key == p.info.id || key == lower(p.info.hf_id) ||
           std::find(p.aliases.begin(), p.aliases.end(), key) != p.aliases.end();
  };
  const std::string file = "models/" + key.substr(key.rfind('/') + 1) + ".json";
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path != file) continue;
    Preset p = read_preset(f);
    if (matches(p)) return p;
  }
  for (const Preset& p : presets()) {
    if (matches(p)) return p;
  }
  return std::nullopt;
}

}  // namespace

std::vector<PresetInfo> list_presets() {
  std::vector<PresetInfo> out;
  for (const Preset& p : presets()) out.push_back(p.info);
  return out;
}

std::vector<ModelListing> list_models() {
  std::vector<ModelListing> out;
  for (const Preset& p : presets()) {
    auto model = load_preset(p.info.id);
    if (!model) continue;  // presets are tested to load (inventory_test.cpp)
    out.push_back({.preset = p.info,
                   .model_type = model->spec.model_type,
                   .params_total = params_total(model->inventory),
                   .params_active = params_active(model->inventory, model->spec),
                   .params_mtp = params_mtp(model->inventory)});
  }
  return out;
}

Result<LoadedModel> load_preset(std::string_view name) {
  const std::string key = lower(name);
  if (const std::optional<Preset> found = find_preset(key)) {
    const Preset& p = *found;
    const json j = json::parse(p.text);
    auto spec = spec_from_config_text(j.at("config").dump(), "preset " + p.info.id);
    if (!spec) return spec.error();
    // Named by one of the preset's aliases: priced as the preset, under the name typed.
    const bool alias = key != p.info.id && key != lower(p.info.hf_id);
    spec->name = alias ? std::string(name) : p.info.hf_id;
    spec->published_params = p.info.published_params;
    spec->published_label = p.info.published;
    LoadedModel model = model_from_spec(std::move(spec).value(), SourceKind::preset, p.info.id);
    if (alias) {
      model.notes.push_back(
          fmt::format("{} is priced with the preset {} ({}): the same config.json "
                      "shapes.",
                      name, p.info.id, p.info.hf_id));
    }
    return model;
  }
  // Another owner's copy under the same repository name (unsloth/Llama-3.2-1B,
  // NousResearch/Meta-Llama-3.1-8B: re-uploads of gated models, which axolotl and Unsloth configs
  // name): the same config.json, so it is priced with the preset and the report says so.
  if (const auto slash = key.find('/'); slash != std::string::npos) {
    // "owner/name" -> "name" (lower-cased ids; one without an owner is all name).
    const auto repo_of = [](const std::string& id) { return id.substr(id.find('/') + 1); };
    const std::string repo = repo_of(key);
    for (const Preset& p : presets()) {
      const bool same_repo = repo_of(lower(p.info.hf_id)) == repo ||
                             std::any_of(p.aliases.begin(), p.aliases.end(),
                                         [&](const std::string& a) { return repo_of(a) == repo; });
      if (!same_repo) continue;
      auto model = load_preset(p.info.id);
      if (!model) return model.error();
      model->spec.name = std::string(name);
      model->notes.push_back(
          fmt::format("{} is priced with the preset {} ({}): the same "
                      "repository name under another owner, a re-upload of "
                      "that model.",
                      name, p.info.id, p.info.hf_id));
      return model;
    }
  }
  // unsloth's "-bnb-4bit" uploads (and "-unsloth-bnb-4bit", which keeps a few layers 16-bit)
  // are the model saved quantised, nf4 with double quantisation (their config.json's
  // quantization_config): the base preset's shapes, loaded 4-bit whatever the training code
  // asks, as a config.json with that quantization_config is (check_checkpoint_quant).
  for (std::string_view suffix : {"-unsloth-bnb-4bit", "-bnb-4bit"}) {
    if (key.size() <= suffix.size() || !key.ends_with(suffix)) continue;
    auto base = load_preset(std::string_view(name).substr(0, name.size() - suffix.size()));
    if (!base) continue;
    const std::string preset_model = base->spec.name;
    base->spec.name = std::string(name);
    base->spec.checkpoint_quant = CheckpointQuant{"bitsandbytes", "nf4", true};
    base->notes.push_back(fmt::format(
        "{} is priced with the preset {} ({}) saved quantised as unsloth's -bnb-4bit uploads "
        "are (nf4 with double quantisation): LoRA on it is QLoRA.",
        name, base->source_detail, preset_model));
    return base;
  }
  // "-Instruct", "-Chat", "-Base", "-it", "-Thinking": a tuned checkpoint of a preset's
  // architecture has the same config.json shapes (instruction tuning changes values, not tensors),
  // so it is priced with that preset and the report says so. A dated release of one
  // (Qwen3-4B-Instruct-2507, -Thinking-2507) keeps the shapes too.
  constexpr std::size_t kDate = 5;  // "-2507": a dash and YYMM
  const bool dated =
      key.size() > kDate && key[key.size() - kDate] == '-' &&
      std::all_of(key.end() - (kDate - 1), key.end(), [](char c) { return c >= '0' && c <= '9'; });
  const std::string_view undated =
      std::string_view(name).substr(0, name.size() - (dated ? kDate : 0));
  const std::string undated_key = key.substr(0, undated.size());
  for (std::string_view suffix : {"-instruct", "-chat", "-base", "-it", "-thinking"}) {
    if (undated_key.size() <= suffix.size() || !undated_key.ends_with(suffix)) continue;
    auto base = load_preset(undated.substr(0, undated.size() - suffix.size()));
    if (!base) continue;
    const std::string preset_model = base->spec.name;
    base->spec.name = std::string(name);
    base->notes.push_back(fmt::format(
        "{} is priced with the preset {} ({}): a tuned checkpoint ({}) has its base model's "
        "tensor shapes.",
        name, base->source_detail, preset_model,
        undated.substr(undated.size() - suffix.size() + 1)));
    return base;
  }
  std::string hint;
  for (const std::string& s : nearest_presets(name)) hint += (hint.empty() ? "" : ", ") + s;
  return Error{ErrorCode::not_found, "", "MODEL",
               fmt::format("'{}' is not a file, a cached Hugging Face model or a preset; "
                           "did you mean: {}? (trainmem models lists presets)",
                           name, hint)};
}

std::vector<std::string> nearest_presets(std::string_view name, std::size_t n) {
  const std::string key = lower(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const Preset& p : presets()) {
    const std::size_t d =
        std::min(edit_distance(key, p.info.id), edit_distance(key, lower(p.info.hf_id)));
    scored.emplace_back(d, p.info.id);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace trainmem

// Presets: config.json contents plus published counts, embedded from data/models/*.json.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

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

std::vector<Preset> presets() {
  std::vector<Preset> out;
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path.rfind("models/", 0) != 0) continue;
    const json j = json::parse(f.contents);  // our own data, checked by a test
    PresetInfo info{j.at("id").get<std::string>(), j.at("hf_id").get<std::string>(),
                    j.at("published").get<std::string>(),
                    j.at("published_params").get<std::int64_t>()};
    std::vector<std::string> aliases;
    for (const json& a : j.value("aliases", json::array()))
      aliases.push_back(lower(a.get<std::string>()));
    out.push_back({std::move(info), f.contents, std::string(f.path), std::move(aliases)});
  }
  std::sort(out.begin(), out.end(),
            [](const Preset& a, const Preset& b) { return a.info.id < b.info.id; });
  return out;
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
  for (const Preset& p : presets()) {
    const bool alias = std::find(p.aliases.begin(), p.aliases.end(), key) != p.aliases.end();
    if (key != p.info.id && key != lower(p.info.hf_id) && !alias) continue;
    const json j = json::parse(p.text);
    auto spec = spec_from_config_text(j.at("config").dump(), "preset " + p.info.id);
    if (!spec) return spec.error();
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
  // "-Instruct", "-Chat", "-Base", "-it": a tuned checkpoint of a preset's architecture has the
  // same config.json shapes (instruction tuning changes values, not tensors), so it is priced
  // with that preset and the report says so.
  for (std::string_view suffix : {"-instruct", "-chat", "-base", "-it"}) {
    if (key.size() <= suffix.size() || !key.ends_with(suffix)) continue;
    auto base = load_preset(std::string_view(name).substr(0, name.size() - suffix.size()));
    if (!base) continue;
    const std::string preset_model = base->spec.name;
    base->spec.name = std::string(name);
    base->notes.push_back(fmt::format(
        "{} is priced with the preset {} ({}): a {} checkpoint has its base model's tensor shapes.",
        name, base->source_detail, preset_model, name.substr(name.size() - suffix.size() + 1)));
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

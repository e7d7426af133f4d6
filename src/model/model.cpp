#include "trainmem/model.h"

#include <fmt/format.h>

namespace trainmem {

std::string_view source_kind_name(SourceKind kind) {
  switch (kind) {
    case SourceKind::preset:
      return "preset";
    case SourceKind::config_file:
      return "config.json";
    case SourceKind::safetensors:
      return "safetensors headers";
    case SourceKind::hf_cache:
      return "hf cache";
    case SourceKind::config_text:
      return "config";
    case SourceKind::module:
      return "module";
  }
  return "";
}

LoadedModel model_from_spec(ModelSpec spec, SourceKind source, std::string detail) {
  LoadedModel model;
  model.inventory = inventory(spec);
  model.spec = std::move(spec);
  model.source = source;
  model.source_detail = std::move(detail);
  // A preset is a published config read as-is; a file the user names may omit keys.
  if (source != SourceKind::preset && !model.spec.defaulted_keys.empty()) {
    std::string keys;
    for (const std::string& k : model.spec.defaulted_keys) keys += (keys.empty() ? "" : ", ") + k;
    model.notes.push_back(fmt::format(
        "The config omits keys that transformers' {} config class fills with its defaults; "
        "trainmem uses the same defaults: {}.",
        model.spec.model_type, keys));
  }
  return model;
}

}  // namespace trainmem

#include "trainmem/model.h"

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
  return model;
}

}  // namespace trainmem

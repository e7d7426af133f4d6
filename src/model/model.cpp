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
    // A family without an adapter has no known class defaults: say what was assumed instead.
    model.notes.push_back(
        model.spec.estimated_from.empty()
            ? fmt::format("The config omits keys that transformers' {} config class fills with "
                          "its defaults; trainmem uses the same defaults: {}.",
                          model.spec.model_type, keys)
            : fmt::format("The config omits keys, and trainmem has no adapter for {} to know its "
                          "config class's defaults; it assumed: {}. A different default (a tied "
                          "embedding, biases) changes the count: a folder with the safetensors "
                          "gives the exact tensors.",
                          model.spec.model_type, keys));
  }
  if (!model.spec.unpriced_parts.empty()) {
    std::string parts;
    for (const std::string& k : model.spec.unpriced_parts) parts += (parts.empty() ? "" : ", ") + k;
    model.notes.push_back(fmt::format(
        "Only the language model is priced: the config's {} (an encoder for other inputs, and "
        "its projector) is not in these figures; add its weights, and its gradients and "
        "optimizer state if it trains.",
        parts));
  }
  return model;
}

}  // namespace trainmem

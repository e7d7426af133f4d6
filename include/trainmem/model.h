// A model as the estimator sees it: its architecture, its exact tensor list, and where both came
// from. Loading one from files is io's job (load.h); everything after works on this value.
#pragma once

#include <string>
#include <vector>

#include "trainmem/inventory.h"
#include "trainmem/model_spec.h"

namespace trainmem {

enum class SourceKind { preset, config_file, safetensors, hf_cache };
std::string_view source_kind_name(SourceKind kind);  // "preset", "config.json", ...

struct LoadedModel {
  ModelSpec spec;
  ParameterInventory inventory;
  SourceKind source = SourceKind::preset;
  std::string source_detail;       // preset id or path
  std::vector<std::string> notes;  // what loading noticed (skipped or unknown tensors)
};

// A model built from a spec (presets and config files): inventory(spec) computed here.
LoadedModel model_from_spec(ModelSpec spec, SourceKind source, std::string detail);

}  // namespace trainmem

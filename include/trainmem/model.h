// A model as the estimator sees it: its architecture, its exact tensor list, and where both came
// from. Loading one from files is io's job (load.h); everything after works on this value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/inventory.h"
#include "trainmem/model_spec.h"

namespace trainmem {

// config_text: a config given as text (a transformers PretrainedConfig from Python); module: the
// named parameters of a live model (trainmem.from_model in Python).
enum class SourceKind { preset, config_file, safetensors, hf_cache, config_text, module };
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

// Loading a model from what the user names: a preset, a config.json, a safetensors folder, or a
// Hugging Face id present in the local cache. The only part of the engine that reads files.
struct LoadOptions {
  // Search the Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub) for
  // "org/name" before falling back to a preset.
  bool use_hf_cache = true;
};

// Resolves `ref` in this order: an existing path (config.json, or a folder holding config.json
// and/or *.safetensors), an "org/name" in the HF cache, a preset by short name or HF id.
Result<LoadedModel> load_model(std::string_view ref, const LoadOptions& options = {});

// A ModelSpec from the text of a config.json; `file` names it in errors.
Result<ModelSpec> spec_from_config_text(std::string_view json_text, const std::string& file);

// A model from the text of a config.json given directly (not read from a file); `name` names it.
Result<LoadedModel> model_from_config_text(std::string_view config_json, const std::string& name);

// A tensor as a framework names it: a parameter of a live torch module, or a safetensors entry.
struct NamedTensor {
  std::string name;                 // "model.layers.0.self_attn.q_proj.weight"
  std::string dtype;                // safetensors spelling: "BF16", "F32", "U8", ...
  std::vector<std::int64_t> shape;  // as stored
};
// A model from a config.json's text and its exact tensor list (as from safetensors headers), so
// the inventory is what the module really holds.
Result<LoadedModel> model_from_tensors(std::string_view config_json,
                                       const std::vector<NamedTensor>& tensors,
                                       const std::string& name);

// Presets embedded in the binary.
struct PresetInfo {
  std::string id;         // short name, e.g. "qwen3-8b"
  std::string hf_id;      // e.g. "Qwen/Qwen3-8B"
  std::string published;  // e.g. "8.2B"
  std::int64_t published_params = 0;
};
std::vector<PresetInfo> list_presets();
// A preset with its exact counts, as `trainmem models` lists it.
struct ModelListing {
  PresetInfo preset;
  std::string model_type;
  std::int64_t params_total = 0;
  std::int64_t params_active = 0;  // per token, for MoE models
  std::int64_t params_mtp = 0;     // multi-token-prediction modules, reported apart
};
std::vector<ModelListing> list_models();
Result<LoadedModel> load_preset(std::string_view name);
// Up to `n` preset names nearest to `name` (edit distance), for "did you mean".
std::vector<std::string> nearest_presets(std::string_view name, std::size_t n = 3);

}  // namespace trainmem

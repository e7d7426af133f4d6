// Models given as values rather than files: a config's text, or a config plus the named tensors
// of a live module (the Python package's from_hf_config and from_model). The tensors map to the
// inventory by the same rules as safetensors headers (io/safetensors_inventory.cpp).
#include <fmt/format.h>

#include "io/safetensors.h"
#include "trainmem/model.h"

namespace trainmem {

Result<LoadedModel> model_from_config_text(std::string_view config_json, const std::string& name) {
  auto spec = spec_from_config_text(config_json, name);
  if (!spec) return spec.error();
  if (spec->name.empty()) spec->name = name;
  return model_from_spec(std::move(spec).value(), SourceKind::config_text, name);
}

Result<LoadedModel> model_from_tensors(std::string_view config_json,
                                       const std::vector<NamedTensor>& tensors,
                                       const std::string& name) {
  auto spec = spec_from_config_text(config_json, name);
  if (!spec) return spec.error();
  if (tensors.empty()) return bad_input(name, "tensors", "the module has no parameters");
  std::vector<io::SafetensorsTensor> mapped;
  mapped.reserve(tensors.size());
  for (const NamedTensor& t : tensors) {
    const std::optional<Dtype> dtype = io::safetensors_dtype(t.dtype);
    if (!dtype) {
      return bad_input(name, t.name,
                       fmt::format("dtype '{}' is not a safetensors dtype trainmem "
                                   "prices (BF16, F16, F32, I8, U8, ...)",
                                   t.dtype));
    }
    for (std::int64_t d : t.shape) {
      if (d < 0) return bad_input(name, t.name, "has a negative dimension");
    }
    mapped.push_back({.name = t.name,
                      .dtype = *dtype,
                      .dtype_name = t.dtype,
                      .shape = t.shape,
                      .begin = 0,
                      .end = 0,
                      .file = name});
  }
  io::TensorMapping mapping = io::map_tensors(mapped, *spec);
  if (auto e = io::check_headers_against_config(mapped, mapping, *spec, name)) return *e;
  LoadedModel model;
  model.inventory = std::move(mapping.inventory);
  model.notes = std::move(mapping.notes);
  model.spec = std::move(spec).value();
  if (model.spec.name.empty()) model.spec.name = name;
  model.source = SourceKind::module;
  model.source_detail = name;
  return model;
}

}  // namespace trainmem

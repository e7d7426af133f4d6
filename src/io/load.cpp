// load_model(): resolves what the user named, in order: a path, a cached HF id, a preset.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/hf_cache.h"
#include "io/read_file.h"
#include "io/safetensors.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;

// Config files are small; anything past io::kMaxConfigBytes is not a config.json.
Result<std::string> read_small_file(const fs::path& path) {
  return io::read_regular_file(path, io::kMaxConfigBytes, "a config.json");
}

Result<LoadedModel> load_config_file(const fs::path& path) {
  auto text = read_small_file(path);
  if (!text) return text.error();
  auto spec = spec_from_config_text(text.value(), path.string());
  if (!spec) return spec.error();
  spec->name = path.parent_path().filename().string();
  if (spec->name.empty()) spec->name = path.filename().string();
  return model_from_spec(std::move(spec).value(), SourceKind::config_file, path.string());
}

bool has_safetensors(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".safetensors") return true;
  }
  return false;
}

Result<LoadedModel> load_folder(const fs::path& dir) {
  // safetensors: the inventory from the headers, the architecture from config.json.
  if (has_safetensors(dir)) return io::load_safetensors_model(dir, SourceKind::safetensors);
  std::error_code ec;
  if (fs::exists(dir / "config.json", ec) || io::describe_non_file(dir / "config.json")) {
    return load_config_file(dir / "config.json");
  }
  return bad_input(dir.string(), "", "holds neither config.json nor *.safetensors files");
}

}  // namespace

Result<LoadedModel> load_model(std::string_view ref, const LoadOptions& options) {
  const fs::path path{std::string(ref)};
  std::error_code ec;
  if (fs::is_directory(path, ec)) return load_folder(path);
  if (fs::is_regular_file(path, ec)) return load_config_file(path);
  const bool looks_like_path = ref.find(".json") != std::string_view::npos ||
                               ref.rfind("./", 0) == 0 || ref.rfind("/", 0) == 0;
  // A device, pipe or socket is named as what it is, never read.
  if (auto kind = io::describe_non_file(path)) {
    return bad_input(std::string(ref), "", fmt::format("is {}, not a file", *kind));
  }
  if (looks_like_path) return bad_input(std::string(ref), "", "no such file or folder");
  // hf cache: an "org/name[@rev]" snapshot in the local Hugging Face cache.
  if (options.use_hf_cache) {
    if (const auto snapshot = io::find_hf_cache_snapshot(ref)) {
      auto model = has_safetensors(*snapshot)
                       ? io::load_safetensors_model(*snapshot, SourceKind::hf_cache)
                       : load_config_file(*snapshot / "config.json");
      if (model) {
        model->source = SourceKind::hf_cache;
        model->spec.name = std::string(ref.substr(0, ref.find('@')));
      }
      return model;
    }
  }
  return load_preset(ref);
}

}  // namespace trainmem

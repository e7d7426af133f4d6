// Where a model's tokenizer.json is (include/trainmem/import.h): beside the files it was read
// from.
#include <filesystem>

#include "trainmem/import.h"
#include "trainmem/model.h"

namespace trainmem {

std::string tokenizer_file_beside(const LoadedModel& m) {
  switch (m.source) {
    case SourceKind::config_file:
    case SourceKind::safetensors:
    case SourceKind::hf_cache: {
      std::error_code ec;
      std::filesystem::path p(m.source_detail);
      if (!std::filesystem::is_directory(p, ec)) p = p.parent_path();
      const std::filesystem::path file = p / "tokenizer.json";
      return std::filesystem::exists(file, ec) ? file.string() : std::string();
    }
    case SourceKind::preset:
    case SourceKind::config_text:
    case SourceKind::module:
      return "";
  }
  return "";
}

}  // namespace trainmem

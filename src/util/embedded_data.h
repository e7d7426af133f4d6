// Data files compiled into the binary by cmake/embed.cmake (data/models/*.json, data/devices/*).
#pragma once

#include <span>
#include <string_view>

namespace trainmem {

struct EmbeddedFile {
  std::string_view path;  // relative to data/, e.g. "models/qwen3-8b.json"
  std::string_view contents;
};

std::span<const EmbeddedFile> embedded_files();

}  // namespace trainmem

// Presets embedded in the binary (src/io/presets.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/model.h"

namespace trainmem {

// Up to `n` preset names nearest to `name` (edit distance), for "did you mean".
std::vector<std::string> nearest_presets(std::string_view name, std::size_t n = 3);

}  // namespace trainmem

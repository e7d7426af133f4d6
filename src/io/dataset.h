// Reading dataset files (src/io/dataset.cpp).
#pragma once

#include <cstdint>

#include "trainmem/import.h"

namespace trainmem {

// Dataset files are read whole, up to 1 GiB; a larger one can be sampled (`shuf -n 100000`).
inline constexpr std::int64_t kMaxDatasetBytes = std::int64_t{1} << 30;

}  // namespace trainmem

// Pricing a plan at a dataset's lengths (src/verdict/dataset_fit.cpp).
#pragma once

#include <cstdint>

#include "trainmem/import.h"

namespace trainmem {

// A long tail worth truncating: the longest record is at least this many times the p95 (after
// max_length). A judgement, not a measured figure: below it truncating at p95 saves little.
inline constexpr std::int64_t kLongTailPercent = 150;

}  // namespace trainmem

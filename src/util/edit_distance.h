// Levenshtein distance, for "did you mean" suggestions of preset and device names.
#pragma once

#include <cstddef>
#include <string_view>

namespace trainmem {

std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace trainmem

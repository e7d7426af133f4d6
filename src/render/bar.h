// The text bar of the budget and the timeline (src/render/text.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace trainmem {

// A bar of `width` cells, filled in proportion bytes / scale: "████····".
std::string proportional_bar(std::int64_t bytes, std::int64_t scale, int width);

}  // namespace trainmem

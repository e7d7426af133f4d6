// Unit names (src/util/units.cpp).
#pragma once

#include <string>
#include <string_view>

#include "trainmem/render.h"

namespace trainmem {

std::string_view unit_name(Unit u);  // "GiB", "GB", "MiB", "bytes"

}  // namespace trainmem

// Phase names (src/ledger/totals.cpp).
#pragma once

#include <string>
#include <string_view>

#include "trainmem/estimate.h"

namespace trainmem {

std::string_view phase_name(Phase p);  // "end_of_forward"

}  // namespace trainmem

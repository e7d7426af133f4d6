// Small helpers every tenant uses to write its formula text the same way.
#pragma once

#include <cstdint>
#include <string>

#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem::ledger {

// "1,543,714,304 params x 2 B (bf16)"
std::string per_param(std::int64_t params, Dtype dtype);
// "1,540,000,000 params x 0.55 B"
std::string per_param_rate(std::int64_t params, double bytes_each);

// Phase masks shared by tenants.
PhaseMask steady_only();                                     // every slot of the steady state
PhaseMask from_phase(int step_index, Phase p);               // this slot and every later slot
PhaseMask between(int step_index, Phase first, Phase last);  // inclusive, in one step

}  // namespace trainmem::ledger

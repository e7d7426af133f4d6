#include "ledger/format.h"

#include <fmt/format.h>

#include "model/dtype.h"
#include "trainmem/render.h"

namespace trainmem::ledger {

std::string per_param(std::int64_t params, Dtype dtype) {
  const int bits = dtype_info(dtype).bits;
  const std::string each =
      bits % 8 == 0 ? fmt::format("{} B", bits / 8) : fmt::format("{}/8 B", bits);
  return fmt::format("{} params x {} ({})", with_commas(params), each, dtype_name(dtype));
}

std::string per_param_rate(std::int64_t params, double bytes_each) {
  return fmt::format("{} params x {:g} B", with_commas(params), bytes_each);
}

PhaseMask steady_only() {
  return kAllPhases & ~((PhaseMask{1} << kPhaseCount) - 1);
}

PhaseMask from_phase(int step_index, Phase p) {
  const int slot = step_index * kPhaseCount + static_cast<int>(p);
  return kAllPhases & ~((PhaseMask{1} << slot) - 1);
}

PhaseMask between(int step_index, Phase first, Phase last) {
  PhaseMask mask = 0;
  for (int p = static_cast<int>(first); p <= static_cast<int>(last); ++p) {
    mask |= phase_bit(step_index, static_cast<Phase>(p));
  }
  return mask;
}

}  // namespace trainmem::ledger

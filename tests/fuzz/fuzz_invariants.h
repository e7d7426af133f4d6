// The invariants of issue 14 point 1, checked by every fuzz target that prices a plan: a priced
// plan has only non-negative, unsaturated figures; a plan check_plan_size() refuses is never
// priced as fitting. A violated invariant traps, so libFuzzer records the input.
#pragma once

#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"
#include "util/checked.h"

namespace trainmem::fuzz {

inline void check_invariants(const LoadedModel& model, const TrainingPlan& plan) {
  if (validate(plan)) return;
  if (check_plan_size(model, plan)) {
    // Refused: the solver's peak is saturated and fits no device.
    if (!is_saturated(peak_of(model, plan))) __builtin_trap();
    if (fit(peak_of(model, plan), custom_device(std::int64_t{1} << 62)).fits) __builtin_trap();
    return;
  }
  const Ledger ledger = estimate(model, plan);
  for (const LedgerItem& i : ledger.items) {
    if (i.bytes < 0 || is_saturated(i.bytes)) __builtin_trap();
  }
  const Totals t = totals(ledger);
  if (t.overflow || t.peak_bytes < 0 || t.static_bytes < 0) __builtin_trap();
}

}  // namespace trainmem::fuzz

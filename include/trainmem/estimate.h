// estimate(): the pure function at the centre. Model + plan in, ledger out. The plan must have
// passed validate(); nothing here fails.
#pragma once

#include "trainmem/ledger.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

Ledger estimate(const LoadedModel& model, const TrainingPlan& plan);

// The inventory as the plan leaves it: trainable flags, quantised flags and storage dtypes set by
// the method, and LoRA adapter tensors appended. Used by estimate() and by reports.
ParameterInventory apply_method(const LoadedModel& model, const TrainingPlan& plan);

// The plan's peak, as estimate() and totals() compute it.
std::int64_t peak_of(const LoadedModel& model, const TrainingPlan& plan);

}  // namespace trainmem

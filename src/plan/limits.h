// The size rule as a yes/no, for solvers that skip candidates (src/plan/limits.cpp).
#pragma once

#include "trainmem/plan.h"

namespace trainmem {

// True when the plan's figures are inside the rule (solve and sweep skip candidates that are not).
bool plan_size_ok(const LoadedModel& model, const TrainingPlan& plan);

}  // namespace trainmem

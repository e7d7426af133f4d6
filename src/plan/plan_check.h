// The plan x model target checks behind check_targets() (src/plan/plan_check.cpp).
#pragma once

#include <string>
#include <vector>

#include "trainmem/plan.h"

namespace trainmem {

// The linear modules of `model` as PEFT names them ("q_proj", "gate_proj", "lm_head"), in order.
std::vector<std::string> linear_module_names(const LoadedModel& model);

// The --lora-targets names (lora/qlora) or --train-modules names (freeze) that reach no tensor.
std::vector<std::string> unmatched_targets(const LoadedModel& model, const TrainingPlan& plan);

}  // namespace trainmem

// Checks and notes that need the plan together with the model (and the device): a LoRA target
// that reaches no module of this model is an error; a sequence beyond the model's context, flash
// attention on a device without it, and QLoRA on Apple are notes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/errors.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// The linear modules of `model` as PEFT names them ("q_proj", "gate_proj", "lm_head"), in order.
std::vector<std::string> linear_module_names(const LoadedModel& model);

// The --lora-targets names (lora/qlora) or --train-modules names (freeze) that reach no tensor.
std::vector<std::string> unmatched_targets(const LoadedModel& model, const TrainingPlan& plan);

// As PEFT: when none of the names reaches a tensor of the model, an error naming the modules that
// exist (--lora-targets router on a dense model); some unmatched names are a note (plan_notes).
std::optional<Error> check_targets(const LoadedModel& model, const TrainingPlan& plan);

// Notes on combinations that price fine but will not run as priced. `device` may be null.
std::vector<std::string> plan_notes(const LoadedModel& model, const TrainingPlan& plan,
                                    const Device* device);

}  // namespace trainmem

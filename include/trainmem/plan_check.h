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

// Each --lora-targets name (lora/qlora) and --train-modules name (freeze) must reach at least one
// tensor of the model; the error names the modules that exist.
std::optional<Error> check_targets(const LoadedModel& model, const TrainingPlan& plan);

// Notes on combinations that price fine but will not run as priced. `device` may be null.
std::vector<std::string> plan_notes(const LoadedModel& model, const TrainingPlan& plan,
                                    const Device* device);

}  // namespace trainmem

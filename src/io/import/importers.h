// One importer per emitted format (emit.h). Each reads its keys over a base plan.
#pragma once

#include <string>

#include "io/import/text_formats.h"
#include "trainmem/plan.h"

namespace trainmem::import {

Result<TrainingPlan> from_deepspeed(const std::string& file, const std::string& text,
                                    TrainingPlan plan, std::int64_t gpus_per_node);
Result<TrainingPlan> from_accelerate(const std::string& file, const Keys& keys, TrainingPlan plan);
Result<TrainingPlan> from_torchtitan(const std::string& file, const Keys& keys, TrainingPlan plan,
                                     std::int64_t gpus_per_node);
Result<TrainingPlan> from_launch(const std::string& file, const std::vector<std::string>& words,
                                 TrainingPlan plan);

// A world size on nodes: `gpus_per_node` when it divides the world, else min(world, 8).
void place(Layout& l, std::int64_t world, std::int64_t gpus_per_node);

}  // namespace trainmem::import

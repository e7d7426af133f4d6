// One importer per emitted format (emit.h). Each reads its keys over a base plan.
#pragma once

#include <string>

#include "io/import/dist/text_formats.h"
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

// A ZeRO offload device ("none", "cpu" or "nvme", as DeepSpeed's offload_optimizer.device and
// accelerate's offload_{optimizer,param}_device spell it) into the layout: the optimizer's
// states or the parameters, and the target. An error names `field`.
std::optional<Error> set_offload_device(const std::string& file, const std::string& field,
                                        const std::string& device, bool optimizer, Layout& l);

}  // namespace trainmem::import

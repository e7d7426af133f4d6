// Configs that run the priced plan, and reading them back. emit_config writes concrete numbers
// (never "auto") for every field the estimate depends on; import_config reads the same file into
// a plan, so `estimate --from FILE` prices what the file will run (round trip per format).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "trainmem/model.h"
#include "trainmem/errors.h"
#include "trainmem/plan.h"

namespace trainmem {

// deepspeed: ds_config.json. accelerate_fsdp: an `accelerate launch --config_file` YAML.
// fsdp2: a torchtitan job TOML (FSDP2 fully_shard with TP/PP/CP/EP degrees). torchrun: a DDP
// launch script (HF Trainer arguments). megatron: a Megatron-LM pretrain_gpt.py launch script.
enum class EmitFormat { deepspeed, accelerate_fsdp, fsdp2, torchrun, megatron };

std::string_view name_of(EmitFormat f);  // "accelerate-fsdp"
std::optional<EmitFormat> parse_emit_format(std::string_view s);

// The file for `plan` on `model`. Error when the plan's layout is not one the format can express
// (e.g. ZeRO in an FSDP config); the error names the flag to change.
Result<std::string> emit_config(EmitFormat format, const LoadedModel& model,
                                const TrainingPlan& plan);

// Reads a file written by emit_config (or by hand in the same format) over `base`: the layout,
// and batch, sequence, accumulation, precision and checkpointing where the format states them.
// The format is detected from the content. `gpus_per_node` places the world size on nodes when
// the format does not say (DeepSpeed JSON, torchtitan TOML); 0 means min(world, 8).
Result<TrainingPlan> import_config(const std::string& path, const std::string& text,
                                   const TrainingPlan& base, std::int64_t gpus_per_node);

}  // namespace trainmem

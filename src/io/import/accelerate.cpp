// accelerate config YAML as `accelerate config` writes it (compute_environment,
// distributed_type, mixed_precision, num_processes, deepspeed_config, fsdp_config).
// mixed_precision bf16/fp16 is torch.autocast over fp32 weights. The distributed fields are the
// layout's: the layout reader (io/import/dist/accelerate.cpp) reads this file for them.
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {

const ImportFormat& accelerate_format() {
  using namespace rules;
  static const ImportFormat f{
      "accelerate YAML",
      [](const FlatConfig& c) {
        return has(c, "compute_environment") || has(c, "distributed_type") ? 8 : 0;
      },
      {{"mixed_precision", "precision",
        [](const std::string& v) -> std::optional<std::string> {
          if (v == "bf16") return "bf16-mixed";
          if (v == "fp16") return "fp16-mixed";
          if (v == "no") return "fp32";
          return v;
        },
        ""},
       not_priced("distributed_type", kReadForTheLayout),
       not_priced("num_processes", kReadForTheLayout),
       not_priced("num_machines", kReadForTheLayout),
       not_priced("deepspeed_config.zero_stage", kReadForTheLayout),
       not_priced("fsdp_config.fsdp_sharding_strategy", kReadForTheLayout),
       not_priced("fsdp_config.fsdp_version", kReadForTheLayout),
       not_priced("fsdp_config.fsdp_reshard_after_forward", kReadForTheLayout),
       not_priced("fsdp_config.fsdp_offload_params", kReadForTheLayout),
       not_priced("fsdp_config.fsdp_backward_prefetch", kReadForTheLayout),
       not_priced("fsdp_config.fsdp_cpu_ram_efficient_loading", kReadForTheLayout),
       // accelerate wraps each FSDP unit in activation checkpointing (utils/fsdp_utils.py):
       // the plan's checkpointing, which a file's false leaves to the training script.
       when_true("fsdp_config.fsdp_activation_checkpointing", "checkpointing", "full")},
      {}};
  return f;
}

}  // namespace trainmem::io

// accelerate config YAML as `accelerate config` writes it (compute_environment,
// distributed_type, mixed_precision, num_processes, deepspeed_config, fsdp_config).
// mixed_precision bf16/fp16 is torch.autocast over fp32 weights. Distributed fields are listed
// as not priced; a distributed layout adds its rules to this list.
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
       not_priced("distributed_type", "multi-GPU layouts are not priced yet (one GPU)"),
       not_priced("num_processes", "multi-GPU layouts are not priced yet (one GPU)"),
       not_priced("num_machines", "multi-GPU layouts are not priced yet (one GPU)"),
       not_priced("deepspeed_config.zero_stage", "ZeRO sharding is not priced yet"),
       not_priced("fsdp_config.fsdp_sharding_strategy", "FSDP is not priced yet")},
      {}};
  return f;
}

}  // namespace trainmem::io

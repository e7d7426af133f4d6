// accelerate launch --config_file YAML (distributed_type: FSDP): processes, machines, FSDP
// version and strategy, offload, activation checkpointing (accelerate
// docs/source/usage_guides/fsdp.md, concept_guides/fsdp1_vs_fsdp2.md).
#include <fmt/format.h>

#include "io/import/importers.h"

namespace trainmem::import {

Result<TrainingPlan> from_accelerate(const std::string& file, const Keys& k, TrainingPlan p) {
  const auto get = [&](const std::string& key) -> std::optional<std::string> {
    if (auto it = k.find(key); it != k.end()) return it->second;
    return std::nullopt;
  };
  if (get("distributed_type") != "FSDP") {
    return bad_input(file, "distributed_type", "trainmem reads accelerate configs with FSDP only");
  }
  Layout l;
  l.engine = Engine::fsdp;
  auto procs = as_int(file, "num_processes", get("num_processes").value_or("1"));
  if (!procs) return procs.error();
  auto machines = as_int(file, "num_machines", get("num_machines").value_or("1"));
  if (!machines) return machines.error();
  if (machines.value() < 1 || procs.value() < 1 || procs.value() % machines.value() != 0) {
    return bad_input(file, "num_processes", "must be a positive multiple of num_machines");
  }
  l.nodes = machines.value();
  l.gpus_per_node = procs.value() / machines.value();
  auto version =
      as_int(file, "fsdp_config.fsdp_version", get("fsdp_config.fsdp_version").value_or("1"));
  if (!version) return version.error();
  l.fsdp_version = static_cast<int>(version.value());
  if (l.fsdp_version == 2) {
    auto reshard = as_bool(file, "fsdp_config.fsdp_reshard_after_forward",
                           get("fsdp_config.fsdp_reshard_after_forward").value_or("true"));
    if (!reshard) return reshard.error();
    l.fsdp = reshard.value() ? FsdpMode::full : FsdpMode::grad_op;
  } else {
    const std::string s = get("fsdp_config.fsdp_sharding_strategy").value_or("FULL_SHARD");
    if (s == "FULL_SHARD" || s == "1") {
      l.fsdp = FsdpMode::full;
    } else if (s == "SHARD_GRAD_OP" || s == "2") {
      l.fsdp = FsdpMode::grad_op;
    } else if (s == "NO_SHARD" || s == "3") {
      l.fsdp = FsdpMode::none;
    } else if (s == "HYBRID_SHARD" || s == "4") {
      l.fsdp = FsdpMode::hybrid;
    } else {
      return bad_input(file, "fsdp_config.fsdp_sharding_strategy",
                       fmt::format("'{}' is not FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or "
                                   "HYBRID_SHARD",
                                   s));
    }
    l.fsdp_knobs.backward_prefetch =
        get("fsdp_config.fsdp_backward_prefetch").value_or("NO_PREFETCH") != "NO_PREFETCH";
  }
  auto offload = as_bool(file, "fsdp_config.fsdp_offload_params",
                         get("fsdp_config.fsdp_offload_params").value_or("false"));
  if (!offload) return offload.error();
  l.offload_optimizer = l.offload_params = offload.value();
  auto efficient = as_bool(file, "fsdp_config.fsdp_cpu_ram_efficient_loading",
                           get("fsdp_config.fsdp_cpu_ram_efficient_loading").value_or("false"));
  if (!efficient) return efficient.error();
  l.fsdp_knobs.cpu_ram_efficient_loading = efficient.value();
  auto ac = as_bool(file, "fsdp_config.fsdp_activation_checkpointing",
                    get("fsdp_config.fsdp_activation_checkpointing").value_or("false"));
  if (!ac) return ac.error();
  if (ac.value()) p.checkpointing = Checkpointing::full;
  const std::string mp = get("mixed_precision").value_or("no");
  if (mp == "bf16") p.precision = Precision::bf16_mixed;
  if (mp == "fp16") p.precision = Precision::fp16_mixed;
  p.layout = l;
  return p;
}

}  // namespace trainmem::import

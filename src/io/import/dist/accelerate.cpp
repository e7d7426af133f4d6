// accelerate launch --config_file YAML: processes and machines; for distributed_type FSDP its
// version and strategy, offload and activation checkpointing (accelerate
// docs/source/usage_guides/fsdp.md, concept_guides/fsdp1_vs_fsdp2.md); for DEEPSPEED the ZeRO
// stage and offload devices of `deepspeed_config` (docs/source/usage_guides/deepspeed.md, the
// keys `accelerate config` writes); MULTI_GPU is DDP and NO one process.
#include <fmt/format.h>

#include "io/import/dist/importers.h"

namespace trainmem::import {
namespace {

// deepspeed_config: zero_stage (0..3) and offload_{optimizer,param}_device (none, cpu, nvme).
template <typename Get>
Result<TrainingPlan> with_deepspeed(const std::string& file, const Get& get, Layout l,
                                    TrainingPlan p) {
  auto stage =
      as_int(file, "deepspeed_config.zero_stage", get("deepspeed_config.zero_stage").value_or("0"));
  if (!stage) return stage.error();
  if (stage.value() < 0 || stage.value() > 3) {
    return bad_input(file, "deepspeed_config.zero_stage", "must be 0..3");
  }
  l.zero_stage = static_cast<int>(stage.value());
  for (const char* what : {"optimizer", "param"}) {
    const std::string key = fmt::format("deepspeed_config.offload_{}_device", what);
    if (auto e = set_offload_device(file, key, get(key).value_or("none"),
                                    std::string_view(what) == "optimizer", l)) {
      return *e;
    }
  }
  p.layout = l;
  return p;
}

}  // namespace

Result<TrainingPlan> from_accelerate(const std::string& file, const Keys& k, TrainingPlan p) {
  const auto get = [&](const std::string& key) -> std::optional<std::string> {
    if (auto it = k.find(key); it != k.end()) return it->second;
    return std::nullopt;
  };
  const std::string type = get("distributed_type").value_or("NO");
  if (type != "FSDP" && type != "DEEPSPEED" && type != "MULTI_GPU" && type != "NO") {
    return bad_input(file, "distributed_type",
                     fmt::format("'{}' is not FSDP, DEEPSPEED, MULTI_GPU or NO", type));
  }
  Layout l;
  l.engine = type == "FSDP" ? Engine::fsdp : type == "DEEPSPEED" ? Engine::deepspeed : Engine::ddp;
  auto procs = as_int(file, "num_processes", get("num_processes").value_or("1"));
  if (!procs) return procs.error();
  auto machines = as_int(file, "num_machines", get("num_machines").value_or("1"));
  if (!machines) return machines.error();
  if (machines.value() < 1 || procs.value() < 1 || procs.value() % machines.value() != 0) {
    return bad_input(file, "num_processes", "must be a positive multiple of num_machines");
  }
  l.nodes = machines.value();
  l.gpus_per_node = procs.value() / machines.value();
  const std::string mp = get("mixed_precision").value_or("no");
  if (mp == "bf16") p.precision = Precision::bf16_mixed;
  if (mp == "fp16") p.precision = Precision::fp16_mixed;
  if (type == "DEEPSPEED") return with_deepspeed(file, get, std::move(l), std::move(p));
  if (type != "FSDP") {
    p.layout = l;
    return p;
  }
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
  p.layout = l;
  return p;
}

}  // namespace trainmem::import

// torchtitan job TOML: [training] batch, sequence, CPU offload; [parallelism] degrees and
// reshard policy; [activation_checkpoint] mode (pytorch/torchtitan docs/fsdp.md, config manual).
#include <fmt/format.h>

#include "io/import/dist/importers.h"
#include "plan/plan.h"

namespace trainmem::import {

Result<TrainingPlan> from_torchtitan(const std::string& file, const Keys& k, TrainingPlan p,
                                     std::int64_t gpus_per_node) {
  const auto get = [&](const std::string& key, const char* fallback) {
    if (auto it = k.find(key); it != k.end()) return it->second;
    return std::string(fallback);
  };
  Layout l;
  l.engine = Engine::fsdp;
  l.fsdp_version = 2;
  std::int64_t degrees[6] = {};
  const char* keys[6] = {
      "parallelism.data_parallel_replicate_degree", "parallelism.data_parallel_shard_degree",
      "parallelism.tensor_parallel_degree",         "parallelism.pipeline_parallel_degree",
      "parallelism.context_parallel_degree",        "parallelism.expert_parallel_degree"};
  for (int i = 0; i < 6; ++i) {
    auto v = as_int(file, keys[i], get(keys[i], "1"));
    if (!v) return v.error();
    if (v.value() < 1)
      return bad_input(file, keys[i], "must be at least 1 (trainmem needs -1 resolved)");
    degrees[i] = v.value();
  }
  const std::int64_t replicate = degrees[0], shard = degrees[1];
  l.tp = degrees[2];
  l.pp = degrees[3];
  l.cp = degrees[4];
  l.ep = degrees[5];
  l.sequence_parallel = l.tp > 1;
  const std::int64_t world = replicate * shard * l.tp * l.pp * l.cp;
  if (replicate > 1) {
    l.fsdp = FsdpMode::hybrid;
    l.nodes = replicate;
    l.gpus_per_node = world / replicate;
  } else {
    place(l, world, gpus_per_node);
  }
  const std::string reshard = get("parallelism.fsdp_reshard_after_forward", "default");
  if (reshard == "never") {
    if (l.fsdp == FsdpMode::hybrid) {
      return bad_input(file, "parallelism.fsdp_reshard_after_forward",
                       "HSDP with reshard never is not modelled");
    }
    l.fsdp = FsdpMode::grad_op;
  } else if (reshard != "default" && reshard != "always") {
    return bad_input(file, "parallelism.fsdp_reshard_after_forward",
                     fmt::format("'{}' is not default, always or never", reshard));
  }
  // torchtitan shards the embedding and [norm, lm_head] as units of their own, outside the root
  // (torchtitan@b5bcd76 distributed/fsdp.py apply_fsdp_to_decoder; a tied model groups them in
  // one unit held like the root, which is how the rank pricing treats a tied model). The
  // [norm, lm_head] unit is not resharded after forward by default: held from its forward to its
  // backward, the same moments as the lm_head line.
  l.fsdp_knobs.embedding_unit = l.fsdp_knobs.head_unit = true;
  auto offload =
      as_bool(file, "training.enable_cpu_offload", get("training.enable_cpu_offload", "false"));
  if (!offload) return offload.error();
  l.offload_optimizer = l.offload_params = offload.value();
  auto batch = as_int(file, "training.local_batch_size", get("training.local_batch_size", "1"));
  if (!batch) return batch.error();
  auto seq = as_int(file, "training.seq_len", get("training.seq_len", "2048"));
  if (!seq) return seq.error();
  if (batch.value() < 1 || seq.value() < 1)
    return bad_input(file, "training", "batch and seq_len must be >= 1");
  p.batch = batch.value();
  p.seq = seq.value();
  const std::int64_t dp = replicate * shard;
  auto global = as_int(file, "training.global_batch_size",
                       get("training.global_batch_size", std::to_string(p.batch * dp).c_str()));
  if (!global) return global.error();
  if (global.value() % (p.batch * dp) != 0) {
    return bad_input(file, "training.global_batch_size",
                     "is not local_batch_size x data-parallel degree x accumulation");
  }
  p.grad_accum = global.value() / (p.batch * dp);
  const std::string mode = get("activation_checkpoint.mode", "none");
  auto ck = parse_checkpointing(mode);
  if (!ck)
    return bad_input(file, "activation_checkpoint.mode",
                     fmt::format("'{}' is not none, full or selective", mode));
  p.checkpointing = *ck;
  p.layout = l;
  return p;
}

}  // namespace trainmem::import

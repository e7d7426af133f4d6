// Layout: how a training run is spread over GPUs. Part of the TrainingPlan; the default (one GPU,
// nothing sharded) prices exactly what estimate() prices. Every knob that changes per-rank memory
// is here with the engine's own default, so an emitted config and the estimate agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "trainmem/errors.h"

namespace trainmem {

struct ModelSpec;

// Which engine shards the data-parallel replicas. ddp: torch DistributedDataParallel (nothing
// sharded). deepspeed: ZeRO stage `zero_stage`. fsdp: PyTorch FSDP, `fsdp_version` 1 or 2.
// megatron: Megatron-LM DDP, optionally with the distributed optimizer.
enum class Engine { ddp, deepspeed, fsdp, megatron };

// FSDP1 ShardingStrategy / FSDP2 equivalents (torch/distributed/fsdp/api.py:32-69, v2.15.0):
// full = FULL_SHARD (FSDP2 reshard_after_forward=True), grad_op = SHARD_GRAD_OP (False),
// hybrid = HYBRID_SHARD (shard inside a node, replicate across), none = NO_SHARD.
enum class FsdpMode { full, grad_op, hybrid, none };

enum class OffloadTarget { cpu, nvme };

struct DeepSpeedKnobs {
  // deepspeed/runtime/zero/config.py defaults (DeepSpeed @38327e07).
  std::int64_t reduce_bucket_size = 500'000'000;     // elements, config.py:109
  std::int64_t allgather_bucket_size = 500'000'000;  // elements, config.py:128
  std::optional<bool> overlap_comm;                  // unset: true only for stage 3, config.py:353
  bool contiguous_gradients = true;                  // config.py:98
  std::int64_t sub_group_size = 1'000'000'000;       // elements, config.py:168
  std::int64_t stage3_prefetch_bucket_size = 50'000'000;      // config.py:208
  std::int64_t stage3_param_persistence_threshold = 100'000;  // config.py:214
  std::int64_t stage3_max_live_parameters = 1'000'000'000;    // config.py:231
  bool zero_init = true;  // model built inside deepspeed.zero.Init (stage 3): no full copy per rank
};

struct FsdpKnobs {
  // FSDP1 defaults (v2.15.0): torch/distributed/fsdp/fully_sharded_data_parallel.py:404-411.
  bool limit_all_gathers = true;          // FSDP1 default: at most two units unsharded at once
  bool backward_prefetch = true;          // BACKWARD_PRE (FSDP1); FSDP2 always prefetches
  bool forward_prefetch = false;          // FSDP1 default
  bool cpu_ram_efficient_loading = true;  // only rank 0 of a node materialises the model on CPU
};

struct Layout {
  std::int64_t gpus_per_node = 1;
  std::int64_t nodes = 1;
  Engine engine = Engine::ddp;
  int zero_stage = 0;  // DeepSpeed ZeRO 0..3 (engine == deepspeed)
  FsdpMode fsdp = FsdpMode::full;
  int fsdp_version = 2;
  std::int64_t tp = 1;  // tensor parallel (Megatron column/row split)
  bool sequence_parallel = false;
  std::int64_t pp = 1;                 // pipeline stages (1F1B)
  std::int64_t virtual_stages = 1;     // interleaved 1F1B chunks per rank
  std::int64_t cp = 1;                 // context parallel
  std::int64_t ep = 1;                 // expert parallel (MoE)
  bool distributed_optimizer = false;  // Megatron --use-distributed-optimizer
  bool offload_optimizer = false;
  bool offload_params = false;
  OffloadTarget offload_to = OffloadTarget::cpu;
  bool pin_memory = true;  // pinned host buffers for offloaded states
  // torch/nn/parallel/distributed.py:31 (v2.15.0): bucket_cap_mb defaults to 25 MiB; while it is
  // left unset the first bucket is 1 MiB (:108-110; reducer.hpp:30 kDefaultFirstBucketBytes).
  double ddp_bucket_cap_mb = 25;
  bool gradient_as_bucket_view = false;  // DDP default: buckets are a second copy of the grads
  DeepSpeedKnobs deepspeed;
  FsdpKnobs fsdp_knobs;
};

std::int64_t world_size(const Layout& l);
// Data-parallel replicas: world / (tp * pp * cp). Expert parallel splits experts inside it.
std::int64_t data_parallel_size(const Layout& l);
// The group a ZeRO/FSDP state is sharded over: the DP size, or the node's share for hybrid.
std::int64_t shard_group_size(const Layout& l);
// True when the plan runs on one GPU with nothing sharded (estimate() is the whole answer).
bool is_single_device(const Layout& l);
// DeepSpeed overlap_comm after its validator: the explicit value, else stage 3.
bool overlap_comm(const Layout& l);

// Plan-only checks (ranges, engine combinations); the Error names the flag.
std::optional<Error> validate_layout(const Layout& l);
// Checks against the model: tp divides heads and kv heads, pp <= layers, ep divides experts.
std::optional<Error> validate_layout(const Layout& l, const ModelSpec& spec);

std::string_view name_of(Engine v);
std::string_view name_of(FsdpMode v);
std::string_view name_of(OffloadTarget v);
std::optional<Engine> parse_engine(std::string_view s);
std::optional<FsdpMode> parse_fsdp_mode(std::string_view s);
std::optional<OffloadTarget> parse_offload_target(std::string_view s);
// "ZeRO-3, 8 GPUs (1 node x 8)", "FSDP2 FULL_SHARD, TP 2, PP 4, 64 GPUs (8 nodes x 8)".
std::string describe(const Layout& l);

}  // namespace trainmem

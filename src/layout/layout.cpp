// Layout vocabulary, sizes and validation. A layout that cannot exist is a one-line error naming
// the flag, never a silently wrong per-rank figure.
#include "layout/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "trainmem/distributed.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "util/text_list.h"

namespace trainmem {
namespace {

constexpr std::array<std::pair<Engine, std::string_view>, 4> kEngines{
    {{Engine::ddp, "ddp"},
     {Engine::deepspeed, "deepspeed"},
     {Engine::fsdp, "fsdp"},
     {Engine::megatron, "megatron"}}};
constexpr std::array<std::pair<FsdpMode, std::string_view>, 4> kFsdpModes{
    {{FsdpMode::full, "full"},
     {FsdpMode::grad_op, "grad-op"},
     {FsdpMode::hybrid, "hybrid"},
     {FsdpMode::none, "none"}}};
constexpr std::array<std::pair<OffloadTarget, std::string_view>, 2> kTargets{
    {{OffloadTarget::cpu, "cpu"}, {OffloadTarget::nvme, "nvme"}}};

template <class E, std::size_t N>
std::string_view find_name(const std::array<std::pair<E, std::string_view>, N>& t, E v) {
  for (const auto& [e, n] : t) {
    if (e == v) return n;
  }
  return "";
}
template <class E, std::size_t N>
std::optional<E> find_value(const std::array<std::pair<E, std::string_view>, N>& t,
                            std::string_view s) {
  for (const auto& [e, n] : t) {
    if (n == s) return e;
  }
  return std::nullopt;
}

Error flag_error(std::string flag, std::string reason) {
  return Error{ErrorCode::usage, "", std::move(flag), std::move(reason)};
}

// Upper bound on any one degree: keeps products far inside 64 bits.
constexpr std::int64_t kMaxDegree = 1 << 16;

std::optional<Error> check_degree(std::string_view flag, std::int64_t v) {
  if (v < 1 || v > kMaxDegree) {
    return flag_error(std::string(flag),
                      fmt::format("must be between 1 and {}, got {}", kMaxDegree, v));
  }
  return std::nullopt;
}

}  // namespace

std::string_view name_of(Engine v) {
  return find_name(kEngines, v);
}
std::string_view name_of(FsdpMode v) {
  return find_name(kFsdpModes, v);
}
std::string_view name_of(OffloadTarget v) {
  return find_name(kTargets, v);
}
std::optional<Engine> parse_engine(std::string_view s) {
  return find_value(kEngines, s);
}
std::optional<FsdpMode> parse_fsdp_mode(std::string_view s) {
  return find_value(kFsdpModes, s);
}
std::optional<OffloadTarget> parse_offload_target(std::string_view s) {
  return find_value(kTargets, s);
}

std::optional<std::string> set_separate_units(std::string_view list, FsdpKnobs& knobs) {
  // torchtune's TransformerDecoder names (tok_embeddings, output; decoder.* in its multimodal
  // models), HF's (embed_tokens, lm_head) and GPT-2's (wte).
  constexpr std::string_view kEmbedding[] = {
      "tok_embeddings", "decoder.tok_embeddings", "embed_tokens", "model.embed_tokens", "wte",
      "transformer.wte"};
  constexpr std::string_view kHead[] = {"output", "decoder.output", "lm_head"};
  for (const std::string& name : split_list(list)) {
    if (std::find(std::begin(kEmbedding), std::end(kEmbedding), name) != std::end(kEmbedding)) {
      knobs.embedding_unit = true;
    } else if (std::find(std::begin(kHead), std::end(kHead), name) != std::end(kHead)) {
      knobs.head_unit = true;
    } else {
      return name;
    }
  }
  return std::nullopt;
}

Engine implied_engine(const Layout& l) {
  const bool model_parallel = l.tp > 1 || l.pp > 1 || l.cp > 1 || l.ep > 1;
  return model_parallel ? Engine::megatron : Engine::ddp;
}

std::int64_t world_size(const Layout& l) {
  return l.gpus_per_node * l.nodes;
}

std::int64_t data_parallel_size(const Layout& l) {
  const std::int64_t model_parallel = l.tp * l.pp * l.cp;
  return model_parallel > 0 ? world_size(l) / model_parallel : 1;
}

std::int64_t shard_group_size(const Layout& l) {
  const std::int64_t dp = data_parallel_size(l);
  if (l.engine == Engine::fsdp && l.fsdp == FsdpMode::hybrid) {
    // HYBRID_SHARD: shard inside a node, replicate across nodes (FSDP1 api.py:55-58 @v2.15.0).
    const std::int64_t per_node = l.gpus_per_node / (l.tp * l.pp * l.cp);
    return per_node >= 1 ? per_node : 1;
  }
  return dp;
}

bool is_single_device(const Layout& l) {
  return world_size(l) == 1 && !l.offload_optimizer && !l.offload_params &&
         (l.engine == Engine::ddp || (l.engine == Engine::deepspeed && l.zero_stage == 0));
}

bool overlap_comm(const Layout& l) {
  // deepspeed/runtime/zero/config.py:351-353 overlap_comm_valid: None -> stage == 3.
  return l.deepspeed.overlap_comm.value_or(l.zero_stage == 3);
}

std::optional<Error> validate_layout(const Layout& l) {
  if (auto e = check_degree("--gpus", l.gpus_per_node)) return e;
  if (auto e = check_degree("--nodes", l.nodes)) return e;
  if (auto e = check_degree("--tp", l.tp)) return e;
  if (auto e = check_degree("--pp", l.pp)) return e;
  if (auto e = check_degree("--cp", l.cp)) return e;
  if (auto e = check_degree("--ep", l.ep)) return e;
  if (auto e = check_degree("--virtual-stages", l.virtual_stages)) return e;
  if (l.zero_stage < 0 || l.zero_stage > 3) {
    return flag_error("--zero", fmt::format("must be 0, 1, 2 or 3, got {}", l.zero_stage));
  }
  if (l.zero_stage > 0 && l.engine != Engine::deepspeed) {
    return flag_error("--zero", fmt::format("ZeRO is DeepSpeed's; it cannot be combined with {}",
                                            name_of(l.engine)));
  }
  if (l.fsdp_version != 1 && l.fsdp_version != 2) {
    return flag_error("--fsdp-version", fmt::format("must be 1 or 2, got {}", l.fsdp_version));
  }
  const bool separate_units = l.fsdp_knobs.embedding_unit || l.fsdp_knobs.head_unit;
  if (separate_units && !(l.engine == Engine::fsdp && l.fsdp_version == 2)) {
    return flag_error("--custom-sharded-layers",
                      "separately sharded layers are FSDP2 units (--fsdp ... --fsdp-version 2)");
  }
  const std::int64_t world = world_size(l);
  const std::int64_t model_parallel = l.tp * l.pp * l.cp;
  if (world % model_parallel != 0) {
    return flag_error(
        "--tp", fmt::format("tp x pp x cp = {} x {} x {} = {} does not divide the {} "
                            "GPUs ({} per node x {} nodes)",
                            l.tp, l.pp, l.cp, model_parallel, world, l.gpus_per_node, l.nodes));
  }
  const std::int64_t dp = world / model_parallel;
  if (l.ep > 1 && dp % l.ep != 0) {
    return flag_error("--ep",
                      fmt::format("expert parallel {} must divide the data-parallel size {} "
                                  "(GPUs / (tp x pp x cp))",
                                  l.ep, dp));
  }
  if (l.sequence_parallel && l.tp == 1) {
    return flag_error("--sequence-parallel", "needs --tp greater than 1");
  }
  if (l.virtual_stages > 1 && l.pp == 1) {
    return flag_error("--virtual-stages", "an interleaved schedule needs --pp greater than 1");
  }
  if (l.engine == Engine::fsdp && l.fsdp == FsdpMode::hybrid && l.nodes == 1) {
    return flag_error("--fsdp",
                      "hybrid shards inside a node and replicates across nodes: it needs "
                      "--nodes greater than 1");
  }
  if (l.engine == Engine::fsdp && l.fsdp == FsdpMode::hybrid &&
      l.gpus_per_node % model_parallel != 0) {
    return flag_error("--fsdp", fmt::format("hybrid sharding needs tp x pp x cp ({}) to divide the "
                                            "{} GPUs of a node",
                                            model_parallel, l.gpus_per_node));
  }
  if (l.offload_params &&
      !(l.engine == Engine::fsdp || (l.engine == Engine::deepspeed && l.zero_stage == 3))) {
    return flag_error("--offload",
                      "parameter offload needs --zero 3 or --fsdp (DeepSpeed "
                      "offload_param is stage 3 only: zero/offload_config.py)");
  }
  if (l.offload_optimizer && l.engine == Engine::ddp) {
    return flag_error("--offload",
                      "optimizer offload needs --zero 1..3, --fsdp or Megatron's "
                      "distributed optimizer");
  }
  if (l.engine == Engine::fsdp && l.offload_to == OffloadTarget::nvme &&
      (l.offload_optimizer || l.offload_params)) {
    return flag_error("--offload-to", "FSDP offloads to CPU only (CPUOffload / CPUOffloadPolicy)");
  }
  if (l.engine == Engine::fsdp && l.offload_optimizer != l.offload_params) {
    return flag_error("--offload",
                      "FSDP offload is all-or-nothing: use --offload both "
                      "(torch/distributed/fsdp/api.py:230-241 CPUOffload)");
  }
  if (l.engine == Engine::megatron && (l.offload_params)) {
    return flag_error("--offload",
                      "Megatron offloads the optimizer only "
                      "(--optimizer-cpu-offload)");
  }
  if (l.distributed_optimizer && l.engine != Engine::megatron) {
    return flag_error("--distributed-optimizer", "is Megatron's; with DeepSpeed use --zero 1");
  }
  if (l.engine == Engine::deepspeed && l.zero_stage >= 2 && l.pp > 1) {
    return flag_error("--pp", "DeepSpeed's pipeline engine supports ZeRO stage 0 or 1 only");
  }
  if (!(l.ddp_bucket_cap_mb > 0 && l.ddp_bucket_cap_mb <= 1e6)) {  // NaN fails both
    return flag_error("--bucket-cap-mb", fmt::format("must be positive and at most 1e6 MiB, got {}",
                                                     l.ddp_bucket_cap_mb));
  }
  const DeepSpeedKnobs& d = l.deepspeed;
  for (const auto& [v, flag] :
       {std::pair{d.reduce_bucket_size, "reduce_bucket_size"},
        std::pair{d.allgather_bucket_size, "allgather_bucket_size"},
        std::pair{d.sub_group_size, "sub_group_size"},
        std::pair{d.stage3_prefetch_bucket_size, "stage3_prefetch_bucket_size"},
        std::pair{d.stage3_param_persistence_threshold, "stage3_param_persistence_threshold"},
        std::pair{d.stage3_max_live_parameters, "stage3_max_live_parameters"}}) {
    if (v < 0 || v > (std::int64_t{1} << 40)) {
      return flag_error(flag, fmt::format("must be between 0 and 2^40 elements, got {}", v));
    }
  }
  return std::nullopt;
}

std::optional<Error> validate_layout(const Layout& l, const ModelSpec& spec) {
  if (auto e = validate_layout(l)) return e;
  if (l.tp > 1 && spec.heads > 0 && spec.heads % l.tp != 0) {
    return flag_error("--tp", fmt::format("{} does not divide the {} attention heads of {}", l.tp,
                                          spec.heads, spec.name));
  }
  if (l.tp > 1 && spec.kv_heads > 0 && spec.kv_heads % l.tp != 0) {
    return flag_error("--tp", fmt::format("{} does not divide the {} key/value heads of {}", l.tp,
                                          spec.kv_heads, spec.name));
  }
  if (l.pp * l.virtual_stages > spec.layers) {
    return flag_error("--pp", fmt::format("{} stages x {} chunks exceed the {} layers of {}", l.pp,
                                          l.virtual_stages, spec.layers, spec.name));
  }
  if (l.ep > 1 && spec.moe.experts == 0) {
    return flag_error("--ep", fmt::format("{} has no experts to spread", spec.name));
  }
  if (l.ep > 1 && spec.moe.experts % l.ep != 0) {
    return flag_error("--ep", fmt::format("{} does not divide the {} experts of {}", l.ep,
                                          spec.moe.experts, spec.name));
  }
  if (l.cp > 1 && l.cp > spec.max_positions && spec.max_positions > 0) {
    return flag_error("--cp", "larger than the model's context");
  }
  return std::nullopt;
}

std::string describe(const Layout& l) {
  std::string engine;
  switch (l.engine) {
    case Engine::ddp:
      engine = "DDP";
      break;
    case Engine::deepspeed:
      engine = fmt::format("DeepSpeed ZeRO-{}", l.zero_stage);
      break;
    case Engine::fsdp: {
      std::string_view mode;
      switch (l.fsdp) {
        case FsdpMode::full:
          mode = "FULL_SHARD";
          break;
        case FsdpMode::grad_op:
          mode = "SHARD_GRAD_OP";
          break;
        case FsdpMode::hybrid:
          mode = "HYBRID_SHARD";
          break;
        case FsdpMode::none:
          mode = "NO_SHARD";
          break;
      }
      engine = fmt::format("FSDP{} {}", l.fsdp_version, mode);
      break;
    }
    case Engine::megatron:
      engine = l.distributed_optimizer ? "Megatron (distributed optimizer)" : "Megatron";
      break;
  }
  std::string out = engine;
  if (l.tp > 1) out += fmt::format(", TP {}{}", l.tp, l.sequence_parallel ? "+SP" : "");
  if (l.pp > 1) {
    out += fmt::format(
        ", PP {}{}", l.pp,
        l.virtual_stages > 1 ? fmt::format(" (x{} interleaved)", l.virtual_stages) : std::string());
  }
  if (l.cp > 1) out += fmt::format(", CP {}", l.cp);
  if (l.ep > 1) out += fmt::format(", EP {}", l.ep);
  if (l.offload_optimizer || l.offload_params) {
    out += fmt::format(", offload {} to {}",
                       l.offload_optimizer && l.offload_params ? "optimizer+params"
                       : l.offload_optimizer                   ? "optimizer"
                                                               : "params",
                       name_of(l.offload_to));
  }
  out += fmt::format(", {} GPU{} ({} node{} x {})", world_size(l), world_size(l) == 1 ? "" : "s",
                     l.nodes, l.nodes == 1 ? "" : "s", l.gpus_per_node);
  return out;
}

bool engine_keeps_master(const Layout& l) {
  switch (l.engine) {
    case Engine::deepspeed:
    case Engine::megatron:
      return true;
    case Engine::fsdp:
      return l.fsdp != FsdpMode::none;
    case Engine::ddp:
      return false;
  }
  return false;
}

Precision with_master_copy(Precision p) {
  if (p == Precision::autocast_bf16) return Precision::bf16_mixed;
  if (p == Precision::autocast_fp16) return Precision::fp16_mixed;
  return p;
}

TrainingPlan with_engine_precision(TrainingPlan plan) {
  if (engine_keeps_master(plan.layout)) plan.precision = with_master_copy(plan.precision);
  return plan;
}

}  // namespace trainmem

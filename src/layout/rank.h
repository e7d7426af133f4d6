// One rank's memory under a layout: every line of the single-device ledger scaled by the share
// this rank keeps, plus the engine's own buffers. Written once as a template over a Sink so the
// same arithmetic feeds both the explained ledger (formulas as text) and the layout search
// (numbers only; the formula lambdas are never called there).
//
// Sources (read, not copied): DeepSpeed @38327e07, Megatron-LM @d98e8a64, PyTorch v2.15.0 (git
// d0f2af8b66b2; line numbers read in the installed wheel, repository paths).
// docs/distributed.md lists them.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "layout/census.h"
#include "ledger/format.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem::layout {

// Everything the per-rank arithmetic reads, computed once per (model, plan without layout).
struct Basis {
  Census census;
  std::vector<LedgerItem> lines;   // the single-device ledger
  std::int64_t weight_bytes = 2;   // bytes of the compute/storage weight dtype (bf16: 2)
  std::int64_t grad_bytes = 2;     // bytes of the gradient dtype
  bool master = false;             // the recipe keeps a separate fp32 master copy
  std::int64_t micro_batches = 1;  // micro-batches per optimizer step (grad_accum)
  // The loop accumulates over micro-batches without reducing the gradients until the last
  // (FrameworkBehaviour::skips_grad_sync_while_accumulating, grad_accum > 1).
  bool unreduced_accumulation = false;
  PhaseMask grad_live = kAllPhases;   // when gradients exist (from the gradients tenant)
  PhaseMask state_live = kAllPhases;  // when optimizer states exist
};

Basis make_basis(const LoadedModel& model, const TrainingPlan& plan);

namespace detail {

inline double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}
inline std::int64_t to_bytes(double v) {
  return static_cast<std::int64_t>(std::llround(v));
}

// Masks of the moments a buffer lives in (both the first and the steady step).
inline PhaseMask both(Phase first, Phase last) {
  return ledger::between(0, first, last) | ledger::between(1, first, last);
}
inline PhaseMask from_load() {
  return kAllPhases;
}

// Korthikanti et al. 2022 (arXiv 2205.05198) Table 2, per layer: without SP tensor parallelism
// splits 24 of the 34 sbh bytes (10 stay replicated); with SP everything is split by t.
inline double tp_activation_share(const Layout& l) {
  if (l.tp == 1) return 1.0;
  const double t = static_cast<double>(l.tp);
  return l.sequence_parallel ? 1.0 / t : (10.0 + 24.0 / t) / 34.0;
}

// Micro-batches whose activations stage r holds at once, in layer-chunks of the stage.
// Megatron megatron/core/pipeline_parallel/schedules.py:957 (1F1B warm-up p - r - 1 forwards,
// then one more before the first backward) and :964 (interleaved: 2(p - r - 1) + (v - 1) p).
inline double in_flight(const Layout& l, std::int64_t stage, std::int64_t micro_batches) {
  if (l.pp == 1) return 1.0;
  const std::int64_t p = l.pp, r = stage, v = l.virtual_stages;
  if (v == 1) return static_cast<double>(std::min(p - r, micro_batches));
  const std::int64_t chunks = std::min(micro_batches * v, 2 * (p - r - 1) + (v - 1) * p + 1);
  return static_cast<double>(chunks) / static_cast<double>(v);
}

}  // namespace detail

// FSDP keeps every unit's gradients unsharded over an accumulating step when the loop skips the
// reduction until the last micro-batch (Basis::unreduced_accumulation).
inline bool keeps_unsharded_gradients(const Layout& l, bool unreduced_accumulation) {
  return l.engine == Engine::fsdp && l.fsdp != FsdpMode::none && unreduced_accumulation;
}

// The per-rank arithmetic. Sink must provide:
//   void scaled(const LedgerItem& base, double factor, const char* why);
//   template <class F> void add(Tenant, const char* label, std::int64_t bytes, PhaseMask live,
//                               F formula, const char* source, bool estimated);
//   template <class F> void host(const char* label, std::int64_t bytes, PhaseMask live,
//                                F formula, const char* source);
template <class Sink>
void price_rank(const Basis& b, const TrainingPlan& plan, std::int64_t stage, Sink& sink) {
  using detail::to_bytes;
  const Layout& l = plan.layout;
  const Census& c = b.census;
  const StageParams sp = stage_params(c, l.tp, l.ep, l.pp, stage);
  const double share_all = detail::ratio(sp.all, static_cast<double>(c.total_all));
  const double share_tr = detail::ratio(sp.trainable, static_cast<double>(c.total_trainable));
  const double Pr = sp.all, Tr = sp.trainable;
  const std::int64_t dp = data_parallel_size(l);
  const std::int64_t N = shard_group_size(l);
  const double n = static_cast<double>(N);
  const double unit = c.largest_layer.on_rank(l.tp, l.ep);
  const bool last = stage == l.pp - 1;

  // FSDP1 flattens a unit's parameters into one FlatParameter, whose gradient covers the frozen
  // ones of a unit that trains any (fully_sharded_data_parallel.py:210-213): the gradient lines
  // cover those units' parameters, not only the trainable ones (LoRA's base included).
  const bool fsdp1 = l.engine == Engine::fsdp && l.fsdp_version == 1;
  const double grad_params = fsdp1 ? std::max(sp.in_trained_units, Tr) : Tr;
  const double cover = detail::ratio(grad_params, Tr);
  const bool unreduced = keeps_unsharded_gradients(l, b.unreduced_accumulation);
  const char* grads_why = unreduced   ? "gradients, unsharded until the last micro-batch"
                          : cover > 1 ? "gradients of every FSDP1 unit that trains (its frozen "
                                        "parameters too), this rank's shard"
                                      : "gradients on this rank";
  // Shares of the single-device lines kept on this rank's GPU, per tenant.
  double f_w = 1, f_g = 1, f_o = 1;  // weights, gradients, master + optimizer states
  bool states_to_host = false, params_to_host = false, grads_to_host = false;

  switch (l.engine) {
    case Engine::ddp:
      break;
    case Engine::megatron:
      if (l.distributed_optimizer) f_o = 1.0 / static_cast<double>(dp);
      states_to_host = l.offload_optimizer;
      if (b.master) f_g = 0;  // replaced by the fp32 main-grad buffer below
      break;
    case Engine::deepspeed:
      if (l.zero_stage >= 1) f_o = 1.0 / n;
      if (l.zero_stage >= 2) f_g = 1.0 / n;
      if (l.zero_stage >= 3) f_w = 1.0 / n;
      states_to_host = l.offload_optimizer;
      params_to_host = l.offload_params;
      grads_to_host = l.offload_optimizer && l.zero_stage == 3;
      break;
    case Engine::fsdp:
      switch (l.fsdp) {
        case FsdpMode::full:
        case FsdpMode::hybrid:
        case FsdpMode::grad_op:
          f_w = f_g = f_o = 1.0 / n;
          break;
        case FsdpMode::none:
          break;
      }
      // While the loop accumulates without the reduction (FSDP1 no_sync, FSDP2
      // set_requires_gradient_sync(False)), each unit keeps its gradients unsharded until the last
      // micro-batch reduces them (torch/distributed/fsdp/fully_sharded_data_parallel.py no_sync:
      // "gradients accumulated ... in unsharded form"; FSDP2 _fully_shard.py
      // set_requires_gradient_sync).
      if (unreduced) f_g = 1.0;
      // FSDP with mixed precision keeps the sharded parameter in fp32: it is the master copy
      // (torch/distributed/fsdp/_fully_shard/_fsdp_api.py:23-26 MixedPrecisionPolicy docstring),
      // and gradients reach the optimizer in that dtype. Priced below as one fp32 line each.
      if (b.master) f_w = f_g = 0;
      states_to_host = params_to_host = grads_to_host = l.offload_optimizer;
      break;
  }

  // 1. The single-device lines, scaled to this rank.
  for (const LedgerItem& item : b.lines) {
    switch (item.tenant) {
      case Tenant::weights:
        sink.scaled(item, params_to_host ? 0.0 : share_all * f_w, "weights on this rank");
        break;
      case Tenant::gradients:
        sink.scaled(item, grads_to_host ? 0.0 : share_tr * f_g * cover, grads_why);
        break;
      case Tenant::master_weights:
        sink.scaled(
            item, (states_to_host || (l.engine == Engine::fsdp && b.master)) ? 0.0 : share_tr * f_o,
            "master copy on this rank");
        break;
      case Tenant::optimizer_states:
        sink.scaled(item, states_to_host ? 0.0 : share_tr * f_o, "optimizer states on this rank");
        break;
      case Tenant::activations: {
        const double layers =
            detail::ratio(static_cast<double>(sp.layers), static_cast<double>(c.layers));
        sink.scaled(item,
                    layers * detail::in_flight(l, stage, b.micro_batches) *
                        detail::tp_activation_share(l) / static_cast<double>(l.cp),
                    "activations of this stage's layers, micro-batches in flight, / tp, / cp");
        break;
      }
      case Tenant::logits:
        sink.scaled(item, last ? 1.0 / static_cast<double>(l.tp * l.cp) : 0.0,
                    "logits on the last stage, vocab-parallel / tp, / cp");
        break;
      case Tenant::temporaries:
        if (item.label.rfind("Optimizer step scratch", 0) == 0) {
          // The optimizer steps only the states this rank holds (on the CPU when offloaded).
          sink.scaled(item, states_to_host ? 0.0 : share_tr * f_o,
                      "the optimizer steps this rank's states only");
        } else if (item.label.rfind("Backward transient", 0) == 0) {
          sink.scaled(item, detail::tp_activation_share(l) / static_cast<double>(l.cp),
                      "one layer's transient / tp, / cp");
        } else if (item.label.rfind("Autocast", 0) == 0) {
          sink.scaled(item, share_all, "weights of this rank");
        } else {
          sink.scaled(item, 1.0, "per process");
        }
        break;
      case Tenant::overhead:
        sink.scaled(item, 1.0, "per process");
        break;
    }
  }

  // Master + optimizer bytes of one GPU holding all trainable params (for host offload lines).
  double states_full = 0, adam_full = 0;
  for (const LedgerItem& item : b.lines) {
    if (item.tenant == Tenant::master_weights || item.tenant == Tenant::optimizer_states) {
      states_full += static_cast<double>(item.bytes);
    }
    if (item.tenant == Tenant::optimizer_states) adam_full += static_cast<double>(item.bytes);
  }
  const std::int64_t gb = b.grad_bytes, wb = b.weight_bytes;
  // The .grad bytes of one GPU holding all trainable params, each in its own dtype (LoRA's fp32
  // adapters on a bf16 base keep fp32 gradients): what DDP's buckets copy.
  double grads_full = 0;
  for (const LedgerItem& item : b.lines) {
    if (item.tenant == Tenant::gradients) grads_full += static_cast<double>(item.bytes);
  }

  // 2. The engine's buffers.
  switch (l.engine) {
    case Engine::ddp: {
      if (dp > 1 && !l.gradient_as_bucket_view) {
        // The buckets take each gradient's dtype (Reducer groups buckets by dtype): the rank's
        // share of the gradient bytes, not T x the model's gradient width. Measured with LoRA's
        // fp32 adapters: validation/data/distributed.jsonl.
        const std::int64_t bytes = to_bytes(grads_full * share_tr);
        // DDP truncates the cap to whole bytes (`int(bucket_cap_mb * 1024 * 1024)`); a cap under
        // one byte puts each gradient in a bucket of its own, as a one-byte cap does.
        const auto cap =
            std::max<std::int64_t>(1, static_cast<std::int64_t>(l.ddp_bucket_cap_mb * 1024 * 1024));
        constexpr std::int64_t kFirst = 1024 * 1024;
        const std::int64_t buckets = bytes <= kFirst ? 1 : 1 + (bytes - kFirst + cap - 1) / cap;
        sink.add(
            Tenant::gradients, "DDP gradient buckets (a second copy of the gradients)", bytes,
            detail::from_load(),
            [=] {
              return fmt::format(
                  "{} B of gradients ({} params, each in its gradient's dtype) in {} buckets "
                  "(first 1 MiB, then {:g} MiB); gradient_as_bucket_view=False",
                  with_commas(bytes), with_commas(to_bytes(Tr)), buckets, l.ddp_bucket_cap_mb);
            },
            "torch/nn/parallel/distributed.py:795-799 lazy_bucket_allocation=False (buckets "
            "allocated at construction), :31 bucket_cap_mb 25, :108-110 first bucket; "
            "torch/csrc/distributed/c10d/reducer.hpp:30 kDefaultFirstBucketBytes 1 MiB, :74 "
            "Reducer::initialize_buckets (torch v2.15.0)",
            false);
      }
      break;
    }
    case Engine::megatron: {
      if (b.master) {
        sink.add(
            Tenant::gradients, "Main-grad buffer, f32 (contiguous, not sharded)", to_bytes(Tr * 4),
            detail::from_load(),
            [=] { return fmt::format("{} params x 4 B", with_commas(to_bytes(Tr))); },
            "megatron/training/theoretical_memory_usage.py:296 (18 or 6 + 12/DP B/param); "
            "docs/user-guide/features/dist_optimizer.md",
            false);
      }
      if (states_to_host) {
        sink.host(
            "Optimizer states and master copy (--optimizer-cpu-offload)",
            to_bytes(states_full * share_tr * f_o), ledger::steady_only(),
            [=] {
              return fmt::format("{:.0f} B x {:.4f} on this rank", states_full, share_tr * f_o);
            },
            "megatron/training/arguments.py --optimizer-cpu-offload");
      }
      break;
    }
    case Engine::deepspeed: {
      const int s = l.zero_stage;
      const DeepSpeedKnobs& d = l.deepspeed;
      const bool overlap = overlap_comm(l);
      if (s == 0 && dp > 1) {
        const double elems = std::min(Tr, 500'000'000.0);
        sink.add(
            Tenant::temporaries, "All-reduce bucket (flattened gradients)",
            to_bytes(elems * static_cast<double>(gb)),
            detail::both(Phase::end_of_backward, Phase::end_of_backward),
            [=] { return fmt::format("min({} grads, 5e8) x {} B", with_commas(to_bytes(Tr)), gb); },
            "deepspeed/runtime/engine.py:111 MEMORY_OPT_ALLREDUCE_SIZE, :2611 "
            "buffered_allreduce_fallback",
            false);
      }
      if ((s == 1 || s == 2) && (d.contiguous_gradients || l.offload_optimizer)) {
        const int copies = overlap ? 2 : 1;
        sink.add(
            Tenant::gradients, "ZeRO IPG buckets (reduce_bucket_size)",
            d.reduce_bucket_size * gb * copies,
            // Allocated at the first gradient hook (after the head's backward, where the loss's
            // gradients peak) and released before backward returns: DeepSpeed 0.19.8
            // stage_1_and_2.py process_gradients -> setup_buckets, _release_ipg_buffers.
            // Measured: validation/data/distributed-zero.jsonl (docs/distributed.md).
            detail::both(Phase::backward, Phase::backward),
            [=] {
              return fmt::format("{} elements x {} B x {} ({})", with_commas(d.reduce_bucket_size),
                                 gb, copies,
                                 overlap ? "overlap_comm: double buffer" : "one buffer");
            },
            "deepspeed/runtime/zero/stage_1_and_2.py:2050-2057 (buf_0, buf_1 with overlap_comm); "
            "zero/config.py:109 reduce_bucket_size 5e8",
            false);
      }
      if (s == 3 && d.contiguous_gradients) {
        sink.add(
            Tenant::gradients, "ZeRO-3 IPG bucket (reduce_bucket_size)", d.reduce_bucket_size * gb,
            detail::from_load(),
            [=] {
              return fmt::format("{} elements x {} B", with_commas(d.reduce_bucket_size), gb);
            },
            "deepspeed/runtime/zero/stage3.py:538 __ipg_bucket_flat_buffer (allocated at init)",
            false);
      }
      if (s == 1 || s == 2) {
        const double part = Tr / n;
        if (l.offload_optimizer) {
          sink.host(
              "fp32 gradient partition (CPU offload)", to_bytes(part * 4), ledger::steady_only(),
              [=] { return fmt::format("{} params / {} x 4 B", with_commas(to_bytes(Tr)), N); },
              "deepspeed/runtime/zero/stage_1_and_2.py:685-689 (cpu_offload: grads copied to a "
              "pinned fp32 buffer)");
        } else {
          sink.add(
              Tenant::temporaries, "fp32 gradient partition at the step", to_bytes(part * 4),
              detail::both(Phase::optimizer_step, Phase::optimizer_step),
              [=] { return fmt::format("{} params / {} x 4 B", with_commas(to_bytes(Tr)), N); },
              "deepspeed/runtime/zero/stage_1_and_2.py:1892 single_grad_partition .to(fp32)",
              false);
        }
      }
      if (s == 3) {
        const double pers = std::min(
            Pr, static_cast<double>(small_tensor_params(c, d.stage3_param_persistence_threshold)) *
                    share_all);
        if (pers > 0) {
          sink.add(
              Tenant::weights, "ZeRO-3 persistent parameters (kept whole)",
              to_bytes(pers * static_cast<double>(wb) * (params_to_host ? 1.0 : 1.0 - 1.0 / n)),
              detail::from_load(),
              [=] {
                return fmt::format("{} params in tensors <= {} elements x {} B{}",
                                   with_commas(to_bytes(pers)),
                                   with_commas(d.stage3_param_persistence_threshold), wb,
                                   params_to_host ? "" : fmt::format(" x (1 - 1/{})", N));
              },
              "deepspeed/runtime/zero/parameter_offload.py:256-264 mark_persistent_parameters; "
              "zero/config.py:214 threshold 1e5",
              false);
        }
        // Never more than the rank's parameters: a model smaller than the prefetch bucket is
        // gathered whole at most (measured: validation/data/distributed-zero.jsonl).
        const double live =
            std::min({static_cast<double>(d.stage3_max_live_parameters),
                      unit + static_cast<double>(d.stage3_prefetch_bucket_size), Pr});
        sink.add(
            Tenant::weights, "ZeRO-3 gathered parameters (module + prefetch)",
            to_bytes(live * static_cast<double>(wb)),
            detail::both(Phase::forward, Phase::end_of_backward),
            [=] {
              return fmt::format(
                  "min(max_live {}, largest layer {} + prefetch {}, all {} params) x {} B",
                  with_commas(d.stage3_max_live_parameters), with_commas(to_bytes(unit)),
                  with_commas(d.stage3_prefetch_bucket_size), with_commas(to_bytes(Pr)), wb);
            },
            "deepspeed/runtime/zero/partitioned_param_coordinator.py:380-382; zero/config.py:208, "
            ":231",
            true);
        sink.add(
            Tenant::gradients, "ZeRO-3 full gradients of the module in backward",
            to_bytes(unit * static_cast<double>(gb)),
            detail::both(Phase::backward, Phase::backward),
            [=] {
              return fmt::format("largest layer {} params x {} B", with_commas(to_bytes(unit)), gb);
            },
            "deepspeed/runtime/zero/stage3.py:3019 largest_layer_memory (4 B = bf16 param + grad)",
            true);
        const double sub = std::min(static_cast<double>(d.sub_group_size), Tr / n);
        if (l.offload_optimizer) {
          sink.host(
              "bf16 gradient partitions (grad_partitions_flat_buffer, pinned)",
              to_bytes(Tr / n * static_cast<double>(gb)), detail::from_load(),
              [=] {
                return fmt::format("{} params / {} x {} B", with_commas(to_bytes(Tr)), N, gb);
              },
              "deepspeed/runtime/zero/stage3.py:546-551 grad_partitions_flat_buffer on the "
              "offload device, pinned");
        } else {
          sink.add(
              Tenant::temporaries, "fp32 gradient of one optimizer sub-group at the step",
              to_bytes(sub * 4), detail::both(Phase::optimizer_step, Phase::optimizer_step),
              [=] {
                return fmt::format("min(sub_group_size {}, {} params / {}) x 4 B",
                                   with_commas(d.sub_group_size), with_commas(to_bytes(Tr)), N);
              },
              "deepspeed/runtime/zero/stage3.py:1895 _prepare_fp32_grad_for_sub_group", false);
        }
      }
      if (states_to_host) {
        if (l.offload_to == OffloadTarget::cpu) {
          sink.host(
              "fp32 master + optimizer states (offload_optimizer: cpu)",
              to_bytes(states_full * share_tr * f_o), ledger::steady_only(),
              [=] {
                return fmt::format("{} B of master + states x {:.6f} (this rank's partition)",
                                   with_commas(to_bytes(states_full)), share_tr * f_o);
              },
              "deepspeed/runtime/zero/stage_1_and_2.py:409 single_partition_of_fp32_groups "
              "(pinned CPU); stage3.py:899 fp32_partitioned_groups_flat");
        } else {
          const double sub = std::min(static_cast<double>(d.sub_group_size), Tr / n);
          sink.host(
              "NVMe swap buffers for optimizer states (4 buffers of a sub-group)",
              to_bytes(4.0 * sub * 4.0), detail::from_load(),
              [=] {
                return fmt::format("4 x min(sub_group_size, {} / {}) x 4 B",
                                   with_commas(to_bytes(Tr)), N);
              },
              "deepspeed/runtime/zero/offload_config.py:64 buffer_count 4");
        }
      }
      if (params_to_host) {
        if (l.offload_to == OffloadTarget::cpu) {
          sink.host(
              "bf16 parameter partition (offload_param: cpu)",
              to_bytes(Pr / n * static_cast<double>(wb)), detail::from_load(),
              [=] {
                return fmt::format("{} params / {} x {} B", with_commas(to_bytes(Pr)), N, wb);
              },
              "deepspeed/runtime/zero/stage3.py:764 fp16_partitioned_groups_flat on CPU");
        } else {
          sink.host(
              "NVMe swap buffers for parameters (buffer_count x buffer_size)",
              std::int64_t{5} * 100'000'000 * wb, detail::from_load(),
              [=] { return fmt::format("5 x 1e8 elements x {} B", wb); },
              "deepspeed/runtime/zero/offload_config.py:33-36 buffer_count 5, buffer_size 1e8");
        }
      }
      break;
    }
    case Engine::fsdp: {
      if (b.master) {
        const double sharded = l.fsdp == FsdpMode::none ? 1.0 : 1.0 / n;
        const auto param_bytes = to_bytes(Pr * 4 * sharded);
        const auto grad_bytes = to_bytes(grad_params * 4 * sharded);
        auto pf = [=] {
          return fmt::format("{} params / {} x 4 B", with_commas(to_bytes(Pr)),
                             l.fsdp == FsdpMode::none ? 1 : N);
        };
        auto gf = [=] {
          return fmt::format("{} params / {} x 4 B", with_commas(to_bytes(grad_params)),
                             l.fsdp == FsdpMode::none ? 1 : N);
        };
        if (params_to_host) {
          sink.host("Sharded parameters, f32 (CPU offload)", param_bytes, detail::from_load(), pf,
                    "torch/distributed/fsdp/api.py:230-241 CPUOffload; _fully_shard/_fsdp_api.py:"
                    "239-255 CPUOffloadPolicy(pin_memory=True)");
          sink.host(
              "Sharded gradients, f32 (CPU offload)", grad_bytes, b.grad_live, gf,
              "torch/distributed/fsdp/api.py:230-241 CPUOffload: grads offloaded with params");
        } else {
          sink.add(Tenant::master_weights, "Sharded parameters, f32 (the master copy)", param_bytes,
                   detail::from_load(), pf,
                   "torch/distributed/fsdp/_fully_shard/_fsdp_api.py:23-26, :38-39 "
                   "MixedPrecisionPolicy: the sharded parameter stays in its original dtype",
                   false);
          sink.add(Tenant::gradients, "Sharded gradients, f32", grad_bytes, b.grad_live, gf,
                   "torch/distributed/fsdp/api.py:136-141 MixedPrecision "
                   "keep_low_precision_grads=False; FSDP2 _fsdp_api.py:50-51 reduced shards keep "
                   "the param's grad dtype",
                   false);
          if (unreduced) {
            // The accumulated unsharded gradients, in the compute dtype, until the reduction.
            sink.add(
                Tenant::gradients, "Unsharded gradients accumulated until the last micro-batch",
                to_bytes(grad_params * static_cast<double>(b.grad_bytes)), b.grad_live,
                [=] {
                  return fmt::format("{} params x {} B", with_commas(to_bytes(grad_params)),
                                     b.grad_bytes);
                },
                "torch/distributed/fsdp/fully_sharded_data_parallel.py no_sync; FSDP2 "
                "_fully_shard.py set_requires_gradient_sync(False); accelerate "
                "Accelerator.accumulate",
                true);
          }
        }
      }
      if (!b.master && params_to_host) {
        double weights_full = 0;  // grads_full: the gradient bytes summed above
        for (const LedgerItem& item : b.lines) {
          if (item.tenant == Tenant::weights) weights_full += static_cast<double>(item.bytes);
        }
        sink.host(
            "Sharded parameters (CPU offload)", to_bytes(weights_full * share_all * f_w),
            detail::from_load(),
            [=] {
              return fmt::format("{} B x {:.6f} (this rank's shard)",
                                 with_commas(to_bytes(weights_full)), share_all * f_w);
            },
            "torch/distributed/fsdp/api.py:230-241 CPUOffload");
        sink.host(
            "Sharded gradients (CPU offload)", to_bytes(grads_full * share_tr * f_g), b.grad_live,
            [=] {
              return fmt::format("{} B x {:.6f} (this rank's shard)",
                                 with_commas(to_bytes(grads_full)), share_tr * f_g);
            },
            "torch/distributed/fsdp/api.py:230-241 CPUOffload: grads offloaded with params");
      }
      if (states_to_host) {
        // With a master recipe the sharded fp32 parameter is the master: only the states here.
        const double full = b.master ? adam_full : states_full;
        sink.host(
            "Optimizer states (CPU offload)", to_bytes(full * share_tr * f_o),
            ledger::steady_only(),
            [=] {
              return fmt::format("{} B x {:.6f} (this rank's shard)", with_commas(to_bytes(full)),
                                 share_tr * f_o);
            },
            "torch/distributed/fsdp/api.py:230-241 CPUOffload: the optimizer step runs on CPU");
      }
      const bool resharded = l.fsdp == FsdpMode::full || l.fsdp == FsdpMode::hybrid;
      // torchtune's custom_sharded_layers: the embedding and the lm_head as FSDP2 units of their
      // own leave the root, and are resharded after their forward like any block.
      // A tied embedding is also the head: one weight, gathered like the root's (torchtitan
      // groups it with the head in one unit it does not reshard after forward).
      const bool own_units = l.fsdp_version == 2 && resharded && !c.tied;
      const double embedding_unit = own_units && l.fsdp_knobs.embedding_unit ? sp.embedding : 0;
      const double head_unit = own_units && l.fsdp_knobs.head_unit ? sp.head : 0;
      const double root = sp.root - embedding_unit - head_unit;
      // A weights line of parameters gathered whole (params x the compute width).
      auto unsharded = [&](const char* label, double params, PhaseMask live, const char* source) {
        sink.add(
            Tenant::weights, label, to_bytes(params * static_cast<double>(wb)), live,
            [=] { return fmt::format("{} params x {} B", with_commas(to_bytes(params)), wb); },
            source, false);
      };
      if (resharded) {
        if (root > 0) {
          unsharded(embedding_unit > 0 || head_unit > 0
                        ? "Unsharded root (what no unit of its own holds)"
                        : "Unsharded root (embedding, final norm, head)",
                    root, detail::both(Phase::forward, Phase::end_of_backward),
                    l.fsdp_version == 2
                        ? "torch/distributed/fsdp/_fully_shard/_fully_shard.py:199-200: "
                          "reshard_after_forward None is False for the root "
                          "(_fsdp_state.py:222-226)"
                        : "torch/distributed/fsdp/_runtime_utils.py:486-500 "
                          "_post_forward_reshard: the root is not freed after forward under "
                          "FULL_SHARD");
        }
        // The lm_head as a unit of its own is gathered to make the logits at the end of forward
        // (the last block is resharded by then) and again when backward reaches them, where the
        // logits' gradients peak; the last block is not yet prefetched at that moment. Measured
        // on CPU/gloo: validation/data/distributed.jsonl fsdp2-full-units rows.
        if (head_unit > 0) {
          unsharded("Unsharded lm_head (a unit of its own)", head_unit,
                    detail::both(Phase::forward, Phase::forward) |
                        detail::both(Phase::backward_start, Phase::backward_start),
                    "torchtune training/_distributed.py shard_model (custom_sharded_layers); "
                    "torch/distributed/fsdp/_fully_shard/_fsdp_state.py _pre_forward / "
                    "_register_pre_backward_hook");
        }
        // The embedding as a unit of its own is gathered at the very start of forward (nothing
        // else live yet) and for its backward, the last: priced at the end of backward.
        if (embedding_unit > 0) {
          unsharded("Unsharded embedding (a unit of its own)", embedding_unit,
                    detail::both(Phase::end_of_backward, Phase::end_of_backward),
                    "torchtune training/_distributed.py shard_model (custom_sharded_layers); "
                    "torch/distributed/fsdp/_fully_shard/_fsdp_state.py "
                    "_register_pre_backward_hook");
        }
        // The block computing is unsharded only while it runs: in forward and in the middle of
        // backward, not at backward_start. Backward reaches a block's pre-backward hook (the
        // hook FSDP registers on its outputs) only after the head's backward, where the logits'
        // gradients peak; by then only the block the root prefetched is gathered. Measured on
        // CPU/gloo: validation/data/distributed.jsonl FULL_SHARD rows hold exactly one block's
        // bytes more than the shard and the root at the backward_start peak (docs/distributed.md).
        // With the lm_head a unit of its own, it is the one computing at forward's peak.
        sink.add(
            Tenant::weights,
            l.fsdp_version == 2 ? "Unsharded block: the one computing"
                                : "Unsharded flat parameter: the unit computing",
            to_bytes(unit * static_cast<double>(wb)),
            (head_unit > 0 ? 0 : detail::both(Phase::forward, Phase::forward)) |
                detail::both(Phase::backward, Phase::backward),
            [=] {
              return fmt::format("largest layer {} params x {} B", with_commas(to_bytes(unit)), wb);
            },
            l.fsdp_version == 2
                ? "torch/distributed/fsdp/_fully_shard/_fsdp_state.py _register_pre_backward_hook "
                  "(a block unshards when backward reaches its outputs)"
                : "torch/distributed/fsdp/_runtime_utils.py _pre_backward_hook (the unit "
                  "unshards when backward reaches its outputs)",
            true);
        const int prefetched = (l.fsdp_version == 1 && !l.fsdp_knobs.limit_all_gathers) ? 2 : 1;
        // With the lm_head a unit of its own, the last block is prefetched from the lm_head's
        // backward, after the backward_start peak.
        const PhaseMask prefetch_live =
            head_unit > 0 ? detail::both(Phase::forward, Phase::end_of_forward) |
                                detail::both(Phase::backward, Phase::end_of_backward)
                          : detail::both(Phase::forward, Phase::end_of_backward);
        sink.add(
            Tenant::weights,
            l.fsdp_version == 2 ? "Unsharded block: the prefetched one"
                                : "Unsharded flat parameters: the prefetched unit(s)",
            to_bytes(prefetched * unit * static_cast<double>(wb)), prefetch_live,
            [=] {
              return fmt::format("{} x largest layer {} params x {} B", prefetched,
                                 with_commas(to_bytes(unit)), wb);
            },
            l.fsdp_version == 2
                ? "torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py:65-74 (all-gather "
                  "copy-in overlap note: current + next group; the root's pre-backward "
                  "prefetches the last block)"
                : "torch/distributed/fsdp/fully_sharded_data_parallel.py:351-360 "
                  "limit_all_gathers: at most two units unsharded; api.py:78-83 "
                  "BackwardPrefetch.BACKWARD_PRE",
            true);
      } else {
        sink.add(
            Tenant::weights,
            l.fsdp == FsdpMode::none
                ? "Compute copy of every parameter (NO_SHARD _mp_shard)"
                : "Every unit unsharded from forward to backward (SHARD_GRAD_OP)",
            to_bytes(Pr * static_cast<double>(wb)),
            detail::both(Phase::forward, Phase::end_of_backward),
            [=] { return fmt::format("{} params x {} B", with_commas(to_bytes(Pr)), wb); },
            "torch/distributed/fsdp/api.py:43-49 ShardingStrategy (SHARD_GRAD_OP keeps "
            "parameters unsharded until after backward); _flat_param.py:297-299 _mp_shard",
            false);
      }
      // FSDP2 reduce-scatters only the parameters that received a gradient, so a unit whose
      // base weights are frozen (LoRA) holds just its adapters' gradients. FSDP1's flat
      // parameter gets one flat gradient, frozen parts included, once any of it trains.
      const double trainable_unit = c.most_trainable_layer.on_rank(l.tp, l.ep);
      const double grad_unit =
          l.fsdp_version == 2 ? trainable_unit : (trainable_unit > 0 ? unit : 0.0);
      if (l.fsdp != FsdpMode::none && grad_unit > 0) {
        sink.add(
            Tenant::gradients, "Unsharded gradients of one unit before reduce-scatter",
            to_bytes(grad_unit * static_cast<double>(gb)),
            detail::both(Phase::backward, Phase::backward),
            [=] {
              return fmt::format("{} {} params x {} B",
                                 l.fsdp_version == 2 ? "trainable in a layer" : "largest layer",
                                 with_commas(to_bytes(grad_unit)), gb);
            },
            l.fsdp_version == 2
                ? "torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py "
                  "_take_unsharded_grads_to_reduce: only parameters with a gradient are "
                  "reduce-scattered"
                : "torch/distributed/fsdp/api.py:78-83 BackwardPrefetch docstring (current "
                  "unit's gradients); fully_sharded_data_parallel.py:210-213 (mixing frozen "
                  "and trainable parameters in a unit: higher than expected gradient memory)",
            true);
      }
      break;
    }
  }
}

}  // namespace trainmem::layout

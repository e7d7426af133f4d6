// Layout search: enumerate, validate against the model, price with LayoutPricer, rank by the
// communication/bubble proxy. No text is built per layout, so a core searches >= 10^5 layouts/s
// (bench/layout_search_bench.cpp).
#include "layout/search.h"

#include <algorithm>
#include <array>

#include "model/dtype.h"
#include "plan/precision.h"
#include "trainmem/distributed.h"

namespace trainmem {
namespace {

// Link speeds per GPU, bytes/s, one direction. Stated assumptions, not measurements:
// NVLink 4 on H100 SXM: 900 GB/s bidirectional -> 450e9; 400 Gb/s InfiniBand NIC per GPU -> 50e9;
// PCIe 5 x16 -> 64e9. CPU Adam steps ~1e9 params/s per rank (order of DeepSpeedCPUAdam).
constexpr double kNvlink = 450e9;
constexpr double kNetwork = 50e9;
constexpr double kPcie = 64e9;
constexpr double kCpuAdamParamsPerSecond = 1e9;

double ring(std::int64_t n) {
  return n > 1 ? static_cast<double>(n - 1) / static_cast<double>(n) : 0.0;
}

}  // namespace

LayoutCost layout_cost(const LoadedModel& model, const TrainingPlan& plan, const Layout& l) {
  const ModelSpec& s = model.spec;
  const PrecisionRecipe& r = recipe(plan.precision);
  const double wb = dtype_info(r.weights).bits / 8.0;
  const double gb = dtype_info(r.gradients).bits / 8.0;
  const double params = static_cast<double>(params_total(model.inventory));
  const double psi = params / static_cast<double>(l.tp * l.pp * std::max<std::int64_t>(1, l.ep));
  const double M = static_cast<double>(plan.grad_accum);
  const std::int64_t dp = data_parallel_size(l);
  const std::int64_t per_node_mp = l.tp * l.cp;
  const bool dp_crosses_nodes = l.nodes > 1 && dp * per_node_mp > l.gpus_per_node;

  LayoutCost c;
  // Data-parallel traffic per step (ZeRO paper: DP and ZeRO-1/2 move 2 psi, ZeRO-3 3 psi per
  // pass; sharded parameters are gathered again for every micro-batch).
  double dp_bytes = 0;
  double offload_bytes = 0;
  double cpu_seconds = 0;
  switch (l.engine) {
    case Engine::ddp:
    case Engine::megatron:
      dp_bytes = 2 * psi * gb;
      break;
    case Engine::deepspeed:
      switch (l.zero_stage) {
        case 0:
        case 1:
          dp_bytes = 2 * psi * gb;
          break;
        case 2:
          dp_bytes = (M + 1) * psi * gb;
          break;
        default:
          dp_bytes = 3 * M * psi * wb;
          break;
      }
      break;
    case Engine::fsdp:
      switch (l.fsdp) {
        case FsdpMode::full:
        case FsdpMode::hybrid:
          dp_bytes = 3 * M * psi * wb;
          break;
        case FsdpMode::grad_op:
          dp_bytes = 2 * M * psi * wb;
          break;
        case FsdpMode::none:
          dp_bytes = 2 * psi * gb;
          break;
      }
      break;
  }
  const double n_shard = static_cast<double>(shard_group_size(l));
  if (l.offload_optimizer) {
    offload_bytes += psi / n_shard * (gb + wb);  // gradients down, updated parameters up
    cpu_seconds = psi / n_shard / kCpuAdamParamsPerSecond;
  }
  if (l.offload_params) offload_bytes += 2 * M * psi / n_shard * wb;  // fetched per pass
  double dp_seconds = 0;
  if (l.engine == Engine::fsdp && l.fsdp == FsdpMode::hybrid) {
    // Shard traffic stays in the node; the shard's gradients are all-reduced across nodes.
    const double intra = dp_bytes * ring(shard_group_size(l));
    const double inter = 2 * psi / n_shard * gb * ring(l.nodes);
    c.comm_bytes += intra + inter;
    dp_seconds = intra / kNvlink + inter / kNetwork;
  } else {
    const double bytes = dp_bytes * ring(dp);
    c.comm_bytes += bytes;
    dp_seconds = bytes / (dp_crosses_nodes ? kNetwork : kNvlink);
  }
  // Tensor parallel: 4 all-reduces (or reduce-scatter + all-gather with SP) of s b h activations
  // per layer per micro-batch (Megatron-LM paper, Shoeybi et al. 2019, section 3).
  const double sbh =
      static_cast<double>(plan.seq * plan.batch * s.hidden) * wb / static_cast<double>(l.cp);
  const double layers_here = static_cast<double>(s.layers) / static_cast<double>(l.pp);
  const double tp_bytes = 4 * 2 * ring(l.tp) * sbh * layers_here * M;
  // Context parallel: K and V gathered in forward and again in backward, their gradients
  // reduce-scattered (Megatron docs context_parallel.md).
  const double kv = static_cast<double>(plan.seq * plan.batch * s.kv_heads * s.head_dim) * wb;
  const double cp_bytes = 3 * 2 * ring(l.cp) * kv * layers_here * M;
  // Pipeline: one activation forward and one gradient back per micro-batch per boundary.
  const double pp_bytes = l.pp > 1 ? 2 * sbh / static_cast<double>(l.tp) * M : 0;
  c.comm_bytes += tp_bytes + cp_bytes + pp_bytes + offload_bytes;
  const bool pp_crosses = l.nodes > 1;
  c.comm_seconds = dp_seconds + tp_bytes / kNvlink + cp_bytes / kNvlink +
                   pp_bytes / (pp_crosses ? kNetwork : kNvlink) + offload_bytes / kPcie +
                   cpu_seconds;
  // Pipeline bubble of 1F1B: (p - 1) / (v M + p - 1) (Narayanan et al. 2021, section 2.2).
  const double p = static_cast<double>(l.pp), v = static_cast<double>(l.virtual_stages);
  c.bubble = l.pp > 1 ? (p - 1) / (v * M + p - 1) : 0.0;
  c.proxy_seconds = c.comm_seconds / (1 - c.bubble);
  return c;
}

std::vector<Layout> enumerate_layouts(const ModelSpec& spec, const SearchSpace& space) {
  std::vector<Layout> out;
  std::vector<std::int64_t> totals;
  for (std::int64_t g = 1; g <= space.max_gpus; g *= 2) {
    if (g >= space.min_gpus) totals.push_back(g);
  }
  if (totals.empty() || totals.back() != space.max_gpus) totals.push_back(space.max_gpus);
  const std::array<std::int64_t, 4> tps{1, 2, 4, 8};
  const std::array<std::int64_t, 5> pps{1, 2, 4, 8, 16};
  const std::array<std::int64_t, 2> cps{1, 2};
  const std::array<std::int64_t, 4> eps{1, 2, 4, 8};
  for (std::int64_t total : totals) {
    const std::int64_t gpn = std::min(total, space.gpus_per_node);
    if (total % gpn != 0) continue;
    Layout base;
    base.gpus_per_node = gpn;
    base.nodes = total / gpn;
    auto push = [&](Layout l) {
      if (!validate_layout(l, spec)) out.push_back(l);
    };
    // Pure data parallel engines.
    push(base);
    for (int z = 1; z <= 3; ++z) {
      Layout l = base;
      l.engine = Engine::deepspeed;
      l.zero_stage = z;
      push(l);
      if (space.allow_offload) {
        l.offload_optimizer = true;
        push(l);
        if (z == 3) {
          l.offload_params = true;
          push(l);
        }
      }
    }
    // FSDP2 and Megatron with model parallelism.
    for (std::int64_t tp : tps) {
      for (std::int64_t pp : pps) {
        for (std::int64_t cp : cps) {
          for (std::int64_t ep : eps) {
            if (ep > 1 && spec.moe.experts == 0) continue;
            Layout l = base;
            l.tp = tp;
            l.pp = pp;
            l.cp = cp;
            l.ep = ep;
            l.sequence_parallel = tp > 1;
            if (tp > gpn) continue;  // TP stays inside a node
            l.engine = Engine::fsdp;
            for (FsdpMode mode : {FsdpMode::full, FsdpMode::grad_op, FsdpMode::hybrid}) {
              l.fsdp = mode;
              l.offload_optimizer = l.offload_params = false;
              push(l);
              if (space.allow_offload && mode == FsdpMode::full) {
                l.offload_optimizer = l.offload_params = true;
                push(l);
              }
            }
            l.fsdp = FsdpMode::full;
            l.offload_optimizer = l.offload_params = false;
            l.engine = Engine::megatron;
            l.distributed_optimizer = false;
            push(l);
            l.distributed_optimizer = true;
            push(l);
          }
        }
      }
    }
  }
  return out;
}

std::optional<LayoutCandidate> min_gpus(const LoadedModel& model, const LayoutPricer& pricer,
                                        const Device& device, const Layout& shape,
                                        std::int64_t max_gpus, std::int64_t gpus_per_node) {
  for (std::int64_t total = 1; total <= max_gpus; total *= 2) {
    Layout l = shape;
    l.gpus_per_node = std::min(total, gpus_per_node);
    l.nodes = total / l.gpus_per_node;
    if (l.engine == Engine::fsdp && l.fsdp == FsdpMode::hybrid && l.nodes == 1) continue;
    if (validate_layout(l, model.spec)) continue;
    LayoutCandidate c;
    c.layout = l;
    c.price = pricer.price(l);
    c.headroom_bytes = device.usable_bytes() - c.price.peak_bytes;
    if (c.headroom_bytes >= 0) return c;
  }
  return std::nullopt;
}

SearchResult search_layouts(const LoadedModel& model, const TrainingPlan& plan,
                            const LayoutPricer& pricer, const Device& device,
                            const SearchSpace& space) {
  SearchResult out;
  for (const Layout& l : enumerate_layouts(model.spec, space)) {
    ++out.searched;
    LayoutCandidate c;
    c.layout = l;
    c.price = pricer.price(l);
    c.headroom_bytes = device.usable_bytes() - c.price.peak_bytes;
    if (c.headroom_bytes < 0) continue;
    if (space.host_bytes_per_node > 0 && c.price.host_bytes > space.host_bytes_per_node) continue;
    c.cost = layout_cost(model, plan, l);
    out.fitting.push_back(c);
  }
  std::stable_sort(out.fitting.begin(), out.fitting.end(),
                   [](const LayoutCandidate& a, const LayoutCandidate& b) {
                     const std::int64_t ga = world_size(a.layout), gb = world_size(b.layout);
                     if (ga != gb) return ga < gb;
                     if (a.cost.proxy_seconds != b.cost.proxy_seconds) {
                       return a.cost.proxy_seconds < b.cost.proxy_seconds;
                     }
                     return a.headroom_bytes > b.headroom_bytes;
                   });
  return out;
}

}  // namespace trainmem

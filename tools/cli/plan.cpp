// trainmem plan MODEL --gpu h100 [--max-gpus 64] [--gpus-per-node 8] [--top 10] [plan flags]
// (or the cluster as --gpus 8 --nodes 2):
// every layout on 1..max GPUs, the fitting ones ranked (fewest GPUs, then the communication /
// bubble proxy, then headroom). Exit 3 when none fits.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "commands.h"
#include "flags.h"
#include "trainmem/distributed.h"
#include "trainmem/render.h"

namespace trainmem::cli {
namespace {

struct PlanArgs {
  std::string model;
  PlanFlags plan;
  DeviceFlags device;
  OutputFlags output;
  std::int64_t max_gpus = 64, min_gpus = 1, gpus_per_node = 8, top = 10;
  bool no_offload = false;
  std::string host_memory;  // per node; layouts needing more are left out
  bool max_gpus_typed = false, gpus_per_node_typed = false;
};

// The first layout flag that names one layout (an engine, a ZeRO stage or FSDP mode, a parallel
// size, offload, a bucket), which the search would replace; empty when there is none.
std::string layout_choice_flag(const LayoutFlags& f) {
  const LayoutFlags d;
  const std::pair<bool, const char*> choices[] = {
      {!f.engine.empty(), "--engine"},
      {f.zero.has_value(), "--zero"},
      {!f.fsdp.empty(), "--fsdp"},
      {f.fsdp_version != d.fsdp_version, "--fsdp-version"},
      {f.tp != d.tp, "--tp"},
      {f.pp != d.pp, "--pp"},
      {f.cp != d.cp, "--cp"},
      {f.ep != d.ep, "--ep"},
      {f.virtual_stages != d.virtual_stages, "--virtual-stages"},
      {f.sequence_parallel, "--sequence-parallel"},
      {f.distributed_optimizer, "--distributed-optimizer"},
      {!f.offload.empty(), "--offload"},
      {f.offload_to != d.offload_to, "--offload-to"},
      {f.bucket_cap_mb != d.bucket_cap_mb, "--bucket-cap-mb"},
      {f.gradient_as_bucket_view, "--gradient-as-bucket-view"},
      {!f.reduce_bucket_size.empty(), "--reduce-bucket-size"},
      {!f.custom_sharded_layers.empty(), "--custom-sharded-layers"}};
  for (const auto& [given, flag] : choices) {
    if (given) return flag;
  }
  return "";
}

// plan searches the layouts, so of the layout flags it takes the cluster's shape only: --gpus N
// is the GPUs in a node (--gpus-per-node) and --nodes M makes N x M the largest count tried
// (--max-gpus). A flag that names one layout is refused rather than silently replaced.
std::optional<Error> read_cluster(const PlanArgs& a, SearchSpace& space) {
  const LayoutFlags& f = a.plan.layout;
  if (const std::string flag = layout_choice_flag(f); !flag.empty()) {
    return Error{ErrorCode::usage, "", flag,
                 "plan searches the engines, ZeRO stages, FSDP modes, parallel sizes and offload "
                 "itself; leave it out, or price that one layout with `trainmem estimate`"};
  }
  if (f.gpus != 1) {
    if (a.gpus_per_node_typed && a.gpus_per_node != f.gpus) {
      return Error{
          ErrorCode::usage, "", "--gpus",
          fmt::format("{} GPUs per node contradicts --gpus-per-node {}", f.gpus, a.gpus_per_node)};
    }
    space.gpus_per_node = f.gpus;
  }
  if (f.gpus != 1 || f.nodes != 1) {
    const std::int64_t cluster = space.gpus_per_node * f.nodes;
    if (a.max_gpus_typed && a.max_gpus != cluster) {
      return Error{ErrorCode::usage, "", "--nodes",
                   fmt::format("a cluster of {} x {} GPUs contradicts --max-gpus {}", f.nodes,
                               space.gpus_per_node, a.max_gpus)};
    }
    if (cluster < a.min_gpus || cluster > 65536) {
      return Error{ErrorCode::usage, "", "--nodes",
                   fmt::format("a cluster of {} GPUs is outside --min-gpus {} to 65536", cluster,
                               a.min_gpus)};
    }
    space.max_gpus = cluster;
  }
  return std::nullopt;
}

// The flags that reproduce a layout with `trainmem estimate`.
std::string layout_flags(const Layout& l) {
  std::string out = fmt::format("--gpus {}", l.gpus_per_node);
  if (l.nodes > 1) out += fmt::format(" --nodes {}", l.nodes);
  switch (l.engine) {
    case Engine::ddp:
      break;
    case Engine::deepspeed:
      out += fmt::format(" --zero {}", l.zero_stage);
      break;
    case Engine::fsdp:
      out += fmt::format(" --fsdp {} --fsdp-version {}", name_of(l.fsdp), l.fsdp_version);
      break;
    case Engine::megatron:
      out += l.distributed_optimizer ? " --distributed-optimizer" : " --engine megatron";
      break;
  }
  if (l.tp > 1)
    out += fmt::format(" --tp {}{}", l.tp, l.sequence_parallel ? " --sequence-parallel" : "");
  if (l.pp > 1) out += fmt::format(" --pp {}", l.pp);
  if (l.cp > 1) out += fmt::format(" --cp {}", l.cp);
  if (l.ep > 1) out += fmt::format(" --ep {}", l.ep);
  if (l.offload_optimizer || l.offload_params) {
    out += fmt::format(" --offload {}", l.offload_optimizer && l.offload_params ? "both"
                                        : l.offload_optimizer                   ? "optimizer"
                                                                                : "params");
  }
  return out;
}

int run_plan(const PlanArgs& a) {
  if (a.max_gpus < 1 || a.max_gpus > 65536 || a.min_gpus < 1 || a.min_gpus > a.max_gpus) {
    return report(
        Error{ErrorCode::usage, "", "--max-gpus", "needs 1 <= --min-gpus <= --max-gpus <= 65536"});
  }
  if (a.top < 1) {
    return report(Error{ErrorCode::usage, "", "--top",
                        fmt::format("must be at least 1 (layouts to show), got {}", a.top)});
  }
  if (a.gpus_per_node < 1 || a.gpus_per_node > 1024) {
    return report(Error{ErrorCode::usage, "", "--gpus-per-node", "must be between 1 and 1024"});
  }
  SearchSpace space;
  space.max_gpus = a.max_gpus;
  space.min_gpus = a.min_gpus;
  space.gpus_per_node = a.gpus_per_node;
  // Before the plan is read: a layout flag's own checks would answer a question plan does not ask.
  if (auto e = read_cluster(a, space)) return report(*e);
  space.allow_offload = !a.no_offload;
  if (!a.host_memory.empty()) {
    auto bytes = parse_size(a.host_memory, "--host-memory");
    if (!bytes) return report(bytes.error());
    space.host_bytes_per_node = bytes.value();
  }
  auto in = read_pricing_inputs(a.model, a.plan, a.device, a.output);
  if (!in) return report(in.error());
  if (!in->device)
    return report(Error{ErrorCode::usage, "", "--gpu", "plan needs --gpu or --memory"});
  const LayoutPricer pricer(in->model, in->plan);
  const SearchResult r = search_layouts(in->model, in->plan, pricer, *in->device, space);
  const Unit u = in->options.unit;
  // The search ranks on live bytes; what is shown is checked as `estimate` judges it.
  const JudgedCandidates judged =
      judge_candidates(in->model, in->plan, *in->device, r.fitting,
                       static_cast<std::size_t>(std::max<std::int64_t>(a.top, 0)));
  const std::size_t shown = judged.fitting.size();
  if (a.output.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const JudgedCandidate& jc : judged.fitting) {
      const LayoutCandidate& c = jc.candidate;
      rows.push_back({{"layout", describe(c.layout)},
                      {"flags", layout_flags(c.layout)},
                      {"gpus", world_size(c.layout)},
                      {"peak_bytes", c.price.peak_bytes},
                      {"most_loaded_stage", c.price.most_loaded_stage},
                      {"judged_bytes", jc.fit.peak_bytes},
                      {"judged_figure", jc.fit.figure},
                      {"headroom_bytes", jc.fit.margin_bytes},
                      {"host_bytes_per_node", c.price.host_bytes},
                      {"comm_bytes_per_step", c.cost.comm_bytes},
                      {"comm_seconds_per_step", c.cost.comm_seconds},
                      {"bubble", c.cost.bubble},
                      {"proxy_seconds", c.cost.proxy_seconds}});
    }
    const nlohmann::json j = {{"schema", "trainmem.plan/1"},
                              {"model", model_label(a.model, *in)},
                              {"device", in->device->id},
                              {"searched", r.searched},
                              {"fitting", r.fitting.size()},
                              {"over_on_device_total", judged.over_on_device_total},
                              {"layouts", rows}};
    std::cout << j.dump(2) << "\n";
    return judged.fitting.empty() ? 3 : 0;
  }
  std::cout << fmt::format(
      "{} on {} ({} usable per GPU): {} layouts searched on {}-{} GPUs, {} fit on live bytes\n",
      model_label(a.model, *in), in->device->name, format_bytes(in->device->usable_bytes(), u),
      r.searched, a.min_gpus, space.max_gpus, r.fitting.size());
  if (judged.over_on_device_total > 0) {
    std::cout << fmt::format(
        "{} of them, ranked above the last shown, are over on the device total (the caching "
        "allocator replayed, the CUDA context added: what `estimate` judges) and are left out.\n",
        judged.over_on_device_total);
  }
  if (judged.fitting.empty()) {
    std::cout << "No layout fits: raise --max-gpus, or see `trainmem advise`.\n";
    return 3;
  }
  std::cout << "Ranked by GPUs, then the throughput proxy (communication time per step / (1 - "
               "pipeline bubble); docs/distributed.md), then headroom.\n\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const LayoutCandidate& c = judged.fitting[i].candidate;
    const Fit& f = judged.fitting[i].fit;
    std::cout << fmt::format(
        "{:>3}. {}\n     {}\n     peak {} per GPU (stage {}), {} {}, headroom {}, host {} per "
        "node; comm {:.3g} GB/step, bubble {:.0f}%, proxy {:.3g} s\n",
        i + 1, describe(c.layout), layout_flags(c.layout), format_bytes(c.price.peak_bytes, u),
        c.price.most_loaded_stage, f.figure, format_bytes(f.peak_bytes, u),
        format_bytes(f.margin_bytes, u), format_bytes(c.price.host_bytes, u),
        c.cost.comm_bytes / 1e9, c.cost.bubble * 100, c.cost.proxy_seconds);
  }
  return 0;
}

}  // namespace

void register_plan(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Search layouts (DDP, ZeRO, FSDP, TP/PP/CP/EP, offload) on a cluster and rank them");
  cmd->add_option("model", args->model,
                  "preset, HF id, config.json, a folder, or none when a --from file names the "
                  "model");
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  CLI::Option* max_gpus =
      cmd->add_option("--max-gpus", args->max_gpus,
                      "largest GPU count to try (also: --gpus N --nodes M as N x M)")
          ->capture_default_str();
  cmd->add_option("--min-gpus", args->min_gpus, "smallest GPU count to try")->capture_default_str();
  CLI::Option* per_node =
      cmd->add_option("--gpus-per-node", args->gpus_per_node, "GPUs in a node (also: --gpus)")
          ->capture_default_str();
  cmd->add_option("--top", args->top, "layouts to show")->capture_default_str();
  cmd->add_flag("--no-offload", args->no_offload, "leave CPU offload out of the search");
  cmd->add_option("--host-memory", args->host_memory,
                  "RAM per node, e.g. 2TB: layouts needing more host memory are left out");
  commands.on(cmd, [args, max_gpus, per_node] {
    args->max_gpus_typed = max_gpus->count() > 0;
    args->gpus_per_node_typed = per_node->count() > 0;
    return run_plan(*args);
  });
}

}  // namespace trainmem::cli

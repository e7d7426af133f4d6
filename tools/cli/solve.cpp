// trainmem solve MODEL [flags] --for max-batch|max-seq|smallest-gpu|smallest-tier [--json].
// Exit 0 with an answer; 3 when nothing fits (answer 0, or no device), as --fail-if-over does.
#include "trainmem/solve.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "flags.h"
#include "trainmem/distributed.h"
#include "trainmem/model.h"
#include "trainmem/render.h"

namespace trainmem::cli {
namespace {

struct SolveArgs {
  std::string model;
  PlanFlags plan;
  DeviceFlags device;
  OutputFlags output;
  std::string target;
  // Not given: 64 tokens for max-seq (kernel-friendly lengths), 1 for max-batch.
  std::optional<std::int64_t> step;
  std::int64_t max_gpus = 1024, gpus_per_node = 8;
};

// solve --for min-gpus: the fewest GPUs on which the plan fits. The layout given (--zero,
// --fsdp, --tp ...) keeps its shape and only grows; with none, ZeRO-3 and FSDP2 FULL_SHARD are
// tried, each with and without CPU offload of parameters and optimizer states, and the smaller
// count wins; at equal counts a layout without offload (no host RAM, no PCIe traffic) wins.
int run_min_gpus(const SolveArgs& a) {
  auto in = read_pricing_inputs(a.model, a.plan, a.device, a.output);
  if (!in) return report(in.error());
  if (!in->device)
    return report(Error{ErrorCode::usage, "", "--gpu", "min-gpus needs --gpu or --memory"});
  if (a.max_gpus < 1 || a.max_gpus > 65536 || a.gpus_per_node < 1 || a.gpus_per_node > 1024) {
    return report(Error{ErrorCode::usage, "", "--max-gpus",
                        "needs 1 <= --max-gpus <= 65536 and 1 <= --gpus-per-node <= 1024"});
  }
  std::vector<Layout> shapes;
  if (is_single_device(in->plan.layout)) {
    Layout z3;
    z3.engine = Engine::deepspeed;
    z3.zero_stage = 3;
    Layout fsdp;
    fsdp.engine = Engine::fsdp;
    shapes = {z3, fsdp};
    for (Layout offloaded : {z3, fsdp}) {
      offloaded.offload_optimizer = offloaded.offload_params = true;
      shapes.push_back(offloaded);
    }
  } else {
    shapes = {in->plan.layout};
  }
  const auto offloads = [](const Layout& l) { return l.offload_optimizer || l.offload_params; };
  // Fewer GPUs first; then no offload; then more room.
  const auto better = [&](const JudgedLayout& c, const JudgedLayout& b) {
    if (world_size(c.layout) != world_size(b.layout))
      return world_size(c.layout) < world_size(b.layout);
    if (offloads(c.layout) != offloads(b.layout)) return !offloads(c.layout);
    return c.fit.margin_bytes > b.fit.margin_bytes;
  };
  const LayoutPricer pricer(in->model, in->plan);
  std::optional<JudgedLayout> best, best_on_gpus;
  for (const Layout& shape : shapes) {
    auto c = min_gpus_judged(in->model, in->plan, pricer, *in->device, shape, a.max_gpus,
                             a.gpus_per_node);
    if (!c) continue;
    if (!best || better(*c, *best)) best = c;
    if (!offloads(c->layout) && (!best_on_gpus || better(*c, *best_on_gpus))) best_on_gpus = c;
  }
  const Unit u = in->options.unit;
  if (a.output.json) {
    nlohmann::json j = {
        {"schema", "trainmem.solve/1"},
        {"model", model_label(a.model, *in)},
        {"for", "min-gpus"},
        {"fits", best.has_value()},
        {"answer", best ? world_size(best->layout) : 0},
        {"layout", best ? describe(best->layout) : std::string()},
        {"peak_bytes", best ? best->fit.peak_bytes : 0},
        {"figure", best ? best->fit.figure : std::string()},
        {"host_bytes_per_node", best ? best->host_bytes : 0},
        {"usable_bytes", in->device->usable_bytes()},
        {"offload", best && offloads(best->layout)},
        {"answer_without_offload", best_on_gpus ? world_size(best_on_gpus->layout) : 0},
        {"layout_without_offload", best_on_gpus ? describe(best_on_gpus->layout) : std::string()}};
    std::cout << j.dump(2) << "\n";
    return best ? 0 : 3;
  }
  if (!best) {
    std::cout << fmt::format("Nothing fits on up to {} x {}: try `trainmem plan` or offload.\n",
                             a.max_gpus, in->device->id);
    return 3;
  }
  std::cout << fmt::format(
      "Fewest GPUs: {} x {} — {}\n  {} {} per GPU of {} usable, {} free; "
      "host {} per node\n",
      world_size(best->layout), in->device->id, describe(best->layout), best->fit.figure,
      format_bytes(best->fit.peak_bytes, u), format_bytes(in->device->usable_bytes(), u),
      format_bytes(best->fit.margin_bytes, u), format_bytes(best->host_bytes, u));
  if (offloads(best->layout)) {
    std::cout << "  Offload keeps parameters and optimizer states in host RAM and moves them over "
                 "PCIe every step: slower than a layout that holds them on the GPUs.\n";
    if (best_on_gpus) {
      std::cout << fmt::format("  Without offload: {} x {} — {}\n",
                               world_size(best_on_gpus->layout), in->device->id,
                               describe(best_on_gpus->layout));
    }
  }
  return 0;
}

int run_solve(const SolveArgs& a) {
  if (a.target == "min-gpus") return run_min_gpus(a);
  const auto target = parse_solve_for(a.target);
  if (!target) {
    return report(Error{ErrorCode::usage, "", "--for",
                        fmt::format("'{}' is not one of: max-batch, max-seq, smallest-gpu, "
                                    "smallest-tier, min-gpus",
                                    a.target)});
  }
  const bool by_device = *target == SolveFor::smallest_gpu || *target == SolveFor::smallest_tier;
  DeviceFlags device_flags = a.device;
  if (by_device) device_flags.reserve.clear();  // applies to every candidate instead
  auto in = read_pricing_inputs(a.model, a.plan, device_flags, a.output);
  if (!in) return report(in.error());
  if (!is_single_device(in->plan.layout)) {
    return report(Error{ErrorCode::usage, "", "--for",
                        fmt::format("{} prices one GPU; with a layout use --for min-gpus, "
                                    "`trainmem plan` or `trainmem estimate`",
                                    a.target)});
  }

  SolveOptions so;
  so.step = a.step ? *a.step : default_solve_step(*target);
  if (!a.device.reserve.empty()) {
    auto bytes = parse_size(a.device.reserve, "--reserve");
    if (!bytes) return report(bytes.error());
    so.reserve_bytes = bytes.value();
  }
  if (!by_device && !in->device) {
    return report(Error{
        ErrorCode::usage, "", "--gpu",
        fmt::format("--for {} needs a device: --gpu NAME or --memory SIZE", name_of(*target))});
  }
  auto r = solve(in->model, in->plan, in->device, *target, so);
  if (!r) return report(r.error());
  const SolveResult& s = r.value();
  const Unit u = in->options.unit;

  if (a.output.json) {
    std::cout << render_solve_json(s, model_label(a.model, *in), so.step);
    return s.found ? 0 : 3;
  }

  if (by_device) {
    const char* what = *target == SolveFor::smallest_gpu ? "GPU" : "tier";
    if (s.device) {
      std::cout << fmt::format(
          "Smallest {}: {} ({}) — {} usable against a {} of {}, {} free\n", what, s.device->id,
          s.device->name, format_bytes(s.device->usable_bytes(), u), s.figure,
          format_bytes(s.peak_bytes, u), format_bytes(s.device->usable_bytes() - s.peak_bytes, u));
      if (s.next_smaller) {
        std::cout << fmt::format(
            "  The next one down, {}, has {} usable: over by {}\n", s.next_smaller->id,
            format_bytes(s.next_smaller->usable_bytes(), u),
            format_bytes(s.next_peak_bytes - s.next_smaller->usable_bytes(), u));
      }
    } else {
      std::cout << fmt::format("No {} in the database fits: the {} is {}\n", what, s.figure,
                               format_bytes(s.next_peak_bytes, u));
    }
  } else {
    const char* what = *target == SolveFor::max_batch ? "micro-batch" : "sequence length";
    if (s.found) {
      std::cout << fmt::format("Largest {} that fits {}: {} ({} {} of {} usable)\n", what,
                               s.device->id, s.answer, s.figure, format_bytes(s.peak_bytes, u),
                               format_bytes(s.usable_bytes, u));
      if (!s.limit_reached) {
        std::cout << fmt::format("  At {} the {} is {}: over by {}\n", s.next, s.figure,
                                 format_bytes(s.next_peak_bytes, u),
                                 format_bytes(s.next_peak_bytes - s.usable_bytes, u));
      }
    } else {
      std::cout << fmt::format(
          "Nothing fits {}: even at {} {} the {} is {} against {} usable (answer 0). Try "
          "`trainmem advise`.\n",
          s.device->id, *target == SolveFor::max_batch ? "batch" : "seq", so.step, s.figure,
          format_bytes(s.peak_bytes, u), format_bytes(s.usable_bytes, u));
      // A step above 1 may skip what fits below it: say so rather than leave "nothing".
      if (so.step > 1) {
        SolveOptions fine = so;
        fine.step = 1;
        auto below = solve(in->model, in->plan, in->device, *target, fine);
        if (below && below->found) {
          std::cout << fmt::format("  Below the step: {} fits ({} {}); --step 1 finds it.\n",
                                   below->answer, below->figure,
                                   format_bytes(below->peak_bytes, u));
        }
      }
    }
  }
  for (const std::string& n : s.notes) {
    if (s.found) std::cout << "  note: " << n << "\n";
  }
  return s.found ? 0 : 3;
}

}  // namespace

void register_solve(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<SolveArgs>();
  CLI::App* cmd = app.add_subcommand(
      "solve", "The largest batch or sequence that fits, or the smallest GPU or tier");
  cmd->add_option("model", args->model, "preset, HF id, config.json, or a folder (or --from)");
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  cmd->add_option("--for", args->target,
                  "max-batch | max-seq | smallest-gpu | smallest-tier | min-gpus")
      ->required();
  cmd->add_option("--max-gpus", args->max_gpus, "min-gpus: the most GPUs to try")
      ->capture_default_str();
  cmd->add_option("--gpus-per-node", args->gpus_per_node, "min-gpus: GPUs in a node")
      ->capture_default_str();
  cmd->add_option("--step", args->step,
                  "max-batch/max-seq: answer in multiples of this [default: 64 for max-seq, 1 "
                  "for max-batch]");
  commands.on(cmd, [args] { return run_solve(*args); });
}

}  // namespace trainmem::cli

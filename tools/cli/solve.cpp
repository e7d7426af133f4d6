// trainmem solve MODEL [flags] --for max-batch|max-seq|smallest-gpu|smallest-tier [--json].
// Exit 0 with an answer; 3 when nothing fits (answer 0, or no device), as --fail-if-over does.
#include "trainmem/solve.h"

#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "flags.h"
#include "trainmem/model.h"
#include "trainmem/render.h"
#include "trainmem/units.h"

namespace trainmem::cli {
namespace {

struct SolveArgs {
  std::string model;
  PlanFlags plan;
  DeviceFlags device;
  OutputFlags output;
  std::string target;
  std::int64_t step = 1;
};

int run_solve(const SolveArgs& a) {
  const auto target = parse_solve_for(a.target);
  if (!target) {
    return report(Error{ErrorCode::usage, "", "--for",
                        fmt::format("'{}' is not one of: max-batch, max-seq, smallest-gpu, "
                                    "smallest-tier",
                                    a.target)});
  }
  const bool by_device = *target == SolveFor::smallest_gpu || *target == SolveFor::smallest_tier;
  DeviceFlags device_flags = a.device;
  if (by_device) device_flags.reserve.clear();  // applies to every candidate instead
  auto in = read_pricing_inputs(a.model, a.plan, device_flags, a.output);
  if (!in) return report(in.error());

  SolveOptions so;
  so.step = a.step;
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
    std::cout << render_solve_json(s, a.model, a.step);
    return s.found ? 0 : 3;
  }

  if (by_device) {
    const char* what = *target == SolveFor::smallest_gpu ? "GPU" : "tier";
    if (s.device) {
      std::cout << fmt::format(
          "Smallest {}: {} ({}) — {} usable against a peak of {}, {} free\n", what, s.device->id,
          s.device->name, format_bytes(s.device->usable_bytes(), u), format_bytes(s.peak_bytes, u),
          format_bytes(s.device->usable_bytes() - s.peak_bytes, u));
      if (s.next_smaller) {
        std::cout << fmt::format("  The next one down, {}, has {} usable: over by {}\n",
                                 s.next_smaller->id,
                                 format_bytes(s.next_smaller->usable_bytes(), u),
                                 format_bytes(s.peak_bytes - s.next_smaller->usable_bytes(), u));
      }
    } else {
      std::cout << fmt::format("No {} in the database fits: the peak is {}\n", what,
                               format_bytes(s.peak_bytes, u));
    }
  } else {
    const char* what = *target == SolveFor::max_batch ? "micro-batch" : "sequence length";
    if (s.found) {
      std::cout << fmt::format("Largest {} that fits {}: {} (peak {} of {} usable)\n", what,
                               s.device->id, s.answer, format_bytes(s.peak_bytes, u),
                               format_bytes(s.usable_bytes, u));
      if (!s.limit_reached) {
        std::cout << fmt::format("  At {} the peak is {}: over by {}\n", s.next,
                                 format_bytes(s.next_peak_bytes, u),
                                 format_bytes(s.next_peak_bytes - s.usable_bytes, u));
      }
    } else {
      std::cout << fmt::format(
          "Nothing fits {}: even at {} {} the peak is {} against {} usable (answer 0). Try "
          "`trainmem advise`.\n",
          s.device->id, *target == SolveFor::max_batch ? "batch" : "seq", a.step,
          format_bytes(s.peak_bytes, u), format_bytes(s.usable_bytes, u));
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
  cmd->add_option("model", args->model, "preset, HF id, config.json, or a folder")->required();
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  cmd->add_option("--for", args->target, "max-batch | max-seq | smallest-gpu | smallest-tier")
      ->required();
  cmd->add_option("--step", args->step, "max-batch/max-seq: answer in multiples of this")
      ->capture_default_str();
  commands.on(cmd, [args] { return run_solve(*args); });
}

}  // namespace trainmem::cli

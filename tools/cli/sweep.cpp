// trainmem sweep MODEL [flags] --over batch|seq [--values 1,2,4] [--svg FILE] [--json].
#include "trainmem/sweep.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "fit_json.h"
#include "flags.h"
#include "trainmem/load.h"
#include "trainmem/svg.h"
#include "trainmem/units.h"

namespace trainmem::cli {
namespace {

struct SweepArgs {
  std::string model;
  PlanFlags plan;
  DeviceFlags device;
  OutputFlags output;
  std::string over = "batch";
  std::string values;
  std::string svg;
};

int run_sweep(const SweepArgs& a) {
  const auto axis = parse_sweep_axis(a.over);
  if (!axis) {
    return report(Error{ErrorCode::usage, "", "--over",
                        fmt::format("'{}' is not one of: batch, seq", a.over)});
  }
  auto plan = make_plan(a.plan);
  if (!plan) return report(plan.error());
  auto device = make_device(a.device);
  if (!device) return report(device.error());
  auto options = make_render_options(a.output);
  if (!options) return report(options.error());
  std::vector<std::int64_t> values;
  if (!a.values.empty()) {
    std::stringstream in(a.values);
    std::string item;
    while (std::getline(in, item, ',')) {
      auto n = parse_count(item, "--values");
      if (!n) return report(n.error());
      values.push_back(n.value());
    }
    std::sort(values.begin(), values.end());
  } else {
    values = default_sweep_values(*axis, plan.value());
  }
  auto model = load_model(a.model);
  if (!model) return report(model.error());

  const Sweep s = sweep(model.value(), plan.value(), *axis, values, device.value());
  if (!a.svg.empty()) {
    std::ofstream out(a.svg);
    out << render_svg_sweep(s, options.value());
    if (!out) return report(bad_input(a.svg, "--svg", "cannot write the file"));
  }
  const Unit u = options->unit;
  if (a.output.json) {
    nlohmann::json pts = nlohmann::json::array();
    for (const SweepPoint& p : s.points) {
      nlohmann::json row = {
          {name_of(*axis), p.x}, {"peak_bytes", p.peak_bytes}, {"static_bytes", p.static_bytes}};
      if (s.device) row["fits"] = p.peak_bytes <= s.device->usable_bytes();
      pts.push_back(row);
    }
    nlohmann::json j = {{"schema", "trainmem.sweep/1"},
                        {"model", a.model},
                        {"over", name_of(*axis)},
                        {"points", pts}};
    if (s.device) j["device"] = device_json(*s.device);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{:>8} {:>12} {:>12}{}\n", name_of(*axis), "peak", "static",
                           s.device ? "  fits" : "");
  for (const SweepPoint& p : s.points) {
    std::cout << fmt::format(
        "{:>8} {:>12} {:>12}{}\n", p.x, format_bytes(p.peak_bytes, u),
        format_bytes(p.static_bytes, u),
        s.device ? (p.peak_bytes <= s.device->usable_bytes() ? "  yes" : "  no") : "");
  }
  if (!a.svg.empty()) std::cout << "SVG written to " << a.svg << "\n";
  return 0;
}

}  // namespace

void register_sweep(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Peak memory against batch or sequence length");
  cmd->add_option("model", args->model, "preset, HF id, config.json, or a folder")->required();
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  cmd->add_option("--over", args->over, "batch | seq")->capture_default_str();
  cmd->add_option("--values", args->values, "the values to price, e.g. 1,2,4,8 (default: a range)");
  cmd->add_option("--svg", args->svg, "write the curves as SVG to this file");
  commands.on(cmd, [args] { return run_sweep(*args); });
}

}  // namespace trainmem::cli

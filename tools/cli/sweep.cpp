// trainmem sweep MODEL [flags] --over batch|seq [--values 1,2,4] [--svg FILE] [--json].
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "flags.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"

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

// With a device, each point carries the verdict estimate gives (SweepPoint::fit): its figure (the
// device total on a CUDA card, not the live peak) against the usable memory.
std::string points_text(const Sweep& s, Unit u) {
  const bool judged = s.device && !s.points.empty() && s.points.front().fit;
  std::string out = fmt::format(
      "{:>8} {:>12} {:>12}{}\n", name_of(s.axis), "peak", "static",
      judged ? fmt::format(" {:>14}  fits", s.points.front().fit->figure) : std::string());
  for (const SweepPoint& p : s.points) {
    out += fmt::format("{:>8} {:>12} {:>12}{}\n", p.x, format_bytes(p.peak_bytes, u),
                       format_bytes(p.static_bytes, u),
                       p.fit ? fmt::format(" {:>14}  {}", format_bytes(p.fit->peak_bytes, u),
                                           p.fit->fits ? "yes" : "no")
                             : std::string());
  }
  return out;
}

constexpr std::size_t kMaxSweepValues = 1000;

Result<std::vector<std::int64_t>> parse_values(const std::string& text) {
  std::vector<std::int64_t> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (values.size() >= kMaxSweepValues) {
      return Error{
          ErrorCode::usage, "", "--values",
          fmt::format("more than {} values; a sweep is a curve, not a table", kMaxSweepValues)};
    }
    auto n = parse_count(item, "--values");
    if (!n) return n.error();
    values.push_back(n.value());
  }
  std::sort(values.begin(), values.end());
  return values;
}

int run_sweep(const SweepArgs& a) {
  const bool both = a.over == "both";
  const auto axis = both ? std::optional<SweepAxis>(SweepAxis::batch) : parse_sweep_axis(a.over);
  if (!axis) {
    return report(Error{ErrorCode::usage, "", "--over",
                        fmt::format("'{}' is not one of: batch, seq, both", a.over)});
  }
  if (both && !a.values.empty()) {
    return report(Error{ErrorCode::usage, "", "--values", "give --values with one axis only"});
  }
  auto in = read_pricing_inputs(a.model, a.plan, a.device, a.output);
  if (!in) return report(in.error());
  std::vector<std::int64_t> values = default_sweep_values(*axis, in->plan);
  if (!a.values.empty()) {
    auto v = parse_values(a.values);
    if (!v) return report(v.error());
    values = v.value();
    // Each value is a plan: refuse one that validate() or the 64-bit rule would refuse, rather
    // than dropping it from the table.
    for (std::int64_t x : values) {
      TrainingPlan p = in->plan;
      (*axis == SweepAxis::batch ? p.batch : p.seq) = x;
      auto e = validate(p);
      if (!e) e = check_plan_matches_model(in->model, p);
      if (!e) e = check_plan_size(in->model, p);
      if (e) {
        return report(Error{
            ErrorCode::bad_input, "", "--values",
            fmt::format("{}: {}", x, e->field.empty() ? e->reason : e->field + ": " + e->reason)});
      }
    }
  }

  std::vector<Sweep> sweeps;
  sweeps.push_back(sweep(in->model, in->plan, *axis, values, in->device));
  if (both) {
    sweeps.push_back(sweep(in->model, in->plan, SweepAxis::seq,
                           default_sweep_values(SweepAxis::seq, in->plan), in->device));
  }
  if (!a.svg.empty()) {
    std::ofstream out(a.svg);
    out << (both ? render_svg_sweep_pair(sweeps[0], sweeps[1], in->options)
                 : render_svg_sweep(sweeps[0], in->options));
    if (!out) return report(bad_input(a.svg, "--svg", "cannot write the file"));
  }
  if (a.output.json) {
    std::cout << render_sweep_json(sweeps, model_label(a.model, *in), a.over);
    return 0;
  }
  for (std::size_t i = 0; i < sweeps.size(); ++i) {
    std::cout << (i > 0 ? "\n" : "") << points_text(sweeps[i], in->options.unit);
  }
  if (!a.svg.empty()) std::cout << "SVG written to " << a.svg << "\n";
  return 0;
}

}  // namespace

void register_sweep(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Peak memory against batch or sequence length");
  cmd->add_option("model", args->model, "preset, HF id, config.json, or a folder (or --from)");
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  cmd->add_option("--over", args->over, "batch | seq | both (two panels)")->capture_default_str();
  cmd->add_option("--values", args->values, "the values to price, e.g. 1,2,4,8 (default: a range)");
  cmd->add_option("--svg", args->svg, "write the curves as SVG to this file");
  commands.on(cmd, [args] { return run_sweep(*args); });
}

}  // namespace trainmem::cli

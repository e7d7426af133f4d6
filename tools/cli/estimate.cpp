// trainmem estimate MODEL [flags] and trainmem explain MODEL [flags].
#include "trainmem/estimate.h"

#include <fstream>
#include <iostream>

#include "commands.h"
#include "flags.h"
#include "trainmem/device.h"
#include "trainmem/render.h"

namespace trainmem::cli {
namespace {

struct EstimateArgs {
  std::string model;
  PlanFlags plan;
  DeviceFlags device;
  OutputFlags output;
  bool fail_if_over = false;
  std::string svg;        // --svg FILE: the budget as a stacked bar
  bool timeline = false;  // --timeline: memory through the step, per phase
};

int run_estimate(const EstimateArgs& a, bool explain) {
  auto in = read_pricing_inputs(a.model, a.plan, a.device, a.output);
  if (!in) return report(in.error());

  const Ledger ledger = estimate(in->model, in->plan);
  std::optional<Fit> verdict;
  if (in->device) verdict = fit(totals(ledger), *in->device);
  const Fit* f = verdict ? &*verdict : nullptr;
  if (!a.svg.empty()) {
    std::ofstream svg_out(a.svg);
    svg_out << render_svg_budget(ledger, f, in->options);
    if (!svg_out) return report(bad_input(a.svg, "--svg", "cannot write the file"));
  }
  if (a.output.json) {
    std::cout << render_json(ledger, f);
  } else if (explain) {
    std::cout << render_explain(ledger, in->options);
  } else {
    std::cout << render_text(ledger, f, in->options);
    if (a.timeline) std::cout << "\n" << render_timeline(ledger, in->options);
  }
  // Exit 3 only on request, so scripts can gate on "does not fit".
  return (a.fail_if_over && f != nullptr && !f->fits) ? 3 : 0;
}

void add(CLI::App& app, Commands& commands, const std::string& name, const std::string& help,
         bool explain) {
  auto args = std::make_shared<EstimateArgs>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("model", args->model,
                  "preset (qwen3-8b), HF id (Qwen/Qwen3-8B), config.json, or a folder")
      ->required();
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  cmd->add_flag("--fail-if-over", args->fail_if_over, "exit 3 when the plan does not fit");
  cmd->add_option("--svg", args->svg, "also write the budget as an SVG stacked bar to FILE");
  cmd->add_flag("--timeline", args->timeline, "also show memory through the step, per phase");
  commands.on(cmd, [args, explain] { return run_estimate(*args, explain); });
}

}  // namespace

void register_estimate(CLI::App& app, Commands& commands) {
  add(app, commands, "estimate", "Itemised memory of a training step and its peak", false);
  add(app, commands, "explain", "The arithmetic behind every line of the estimate", true);
}

}  // namespace trainmem::cli

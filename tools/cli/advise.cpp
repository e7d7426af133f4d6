// trainmem advise MODEL [flags] (--gpu|--memory) [--json]: the changes that make a plan fit.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "flags.h"
#include "trainmem/model.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"
#include "trainmem/units.h"

namespace trainmem::cli {
namespace {

struct AdviseArgs {
  std::string model;
  PlanFlags plan;
  DeviceFlags device;
  OutputFlags output;
};

int run_advise(const AdviseArgs& a) {
  auto in = read_pricing_inputs(a.model, a.plan, a.device, a.output);
  if (!in) return report(in.error());
  if (!in->device) {
    return report(Error{ErrorCode::usage, "", "--gpu", "advise needs --gpu NAME or --memory SIZE"});
  }

  const Advice adv = advise(in->model, in->plan, *in->device);
  const Unit u = in->options.unit;
  if (a.output.json) {
    std::cout << render_advice_json(adv, a.model);
    return 0;
  }
  const Fit& n = adv.now;
  std::cout << fmt::format(
      "{} on {}: peak {} against {} usable — {}\n\n", a.model, n.device.name,
      format_bytes(n.peak_bytes, u), format_bytes(n.usable_bytes, u),
      n.fits ? fmt::format("fits, {} free", format_bytes(n.margin_bytes, u))
             : fmt::format("does not fit, over by {}", format_bytes(-n.margin_bytes, u)));
  if (adv.options.empty()) {
    std::cout << "No change in trainmem's list lowers the peak.\n";
    return 0;
  }
  std::cout << (n.fits ? "Changes that add headroom, cheapest first:\n"
                       : "Changes that make it fit, cheapest first:\n");
  bool shown_rest = false;
  int i = 0;
  for (const AdviceOption& o : adv.options) {
    if (!o.fits && !shown_rest) {
      std::cout << "\nHelp, but not enough on their own:\n";
      shown_rest = true;
    }
    std::cout << fmt::format(
        "{:>3}. {}\n     {}\n     peak {} ({}{}) — cost: {}\n", ++i, o.change, o.flags,
        format_bytes(o.peak_bytes, u), o.fits ? "fits, " : "over by ",
        format_bytes(o.fits ? o.margin_bytes : -o.margin_bytes, u) + (o.fits ? " free" : ""),
        o.cost);
  }
  return 0;
}

}  // namespace

void register_advise(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<AdviseArgs>();
  CLI::App* cmd = app.add_subcommand("advise", "What to change so the plan fits, cheapest first");
  cmd->add_option("model", args->model, "preset, HF id, config.json, or a folder")->required();
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  commands.on(cmd, [args] { return run_advise(*args); });
}

}  // namespace trainmem::cli

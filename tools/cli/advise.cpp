// trainmem advise MODEL [flags] (--gpu|--memory) [--json]: the changes that make a plan fit.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "commands.h"
#include "dataset.h"
#include "flags.h"
#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"

namespace trainmem::cli {
namespace {

struct AdviseArgs {
  std::string model;
  PlanFlags plan;
  DeviceFlags device;
  OutputFlags output;
  std::string dataset;  // --dataset FILE: advise the plan at the longest record
};

// --dataset: the plan to advise holds the longest record (after max_length), and truncating at
// the p95 becomes an option when the tail is long. Priced as advise() prices (the ledger's peak).
Result<std::optional<DatasetFit>> apply_dataset(const AdviseArgs& a, PricingInputs& in) {
  if (a.dataset.empty()) return std::optional<DatasetFit>{};
  if (auto e = dataset_single_device(a.dataset, in.plan)) return *e;
  const Device device = *in.device;
  auto d = price_dataset(a.dataset, in, [&](const TrainingPlan& p) -> Result<LengthPrice> {
    if (auto e = check_plan_size(in.model, p)) return *e;
    const Fit f = judge(in.model, p, device);  // as advise() judges the plan
    return LengthPrice{f.peak_bytes, f};
  });
  if (!d) return d.error();
  for (const DatasetRow& r : d->rows) {
    if (r.at == "max") in.plan.seq = r.seq;
  }
  return std::optional<DatasetFit>(std::move(d).value());
}

// A shell word: quoted when it holds anything but safe characters.
std::string shell_word(const std::string& w) {
  const bool safe = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
  });
  if (safe) return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The complete command for an option: the user's own `advise` arguments as an `estimate`
// command, with the option's flags appended. A typed flag that sets a setting the option changes
// is left out with its value (--batch 8 where the option says --batch 2; --bf16 where it says
// --precision bf16): the command reads as the plan it prices, and two flags that disagree are
// refused (flags.cpp).
std::string command_for(const std::vector<std::string>& typed, const std::string& flags) {
  std::vector<std::string> option_words;
  for (std::size_t at = 0; at < flags.size();) {
    const std::size_t space = std::min(flags.find(' ', at), flags.size());
    if (space > at) option_words.push_back(flags.substr(at, space - at));
    at = space + 1;
  }
  const std::set<std::string> changed = plan_keys_of(option_words);
  auto changes = [&](const std::vector<std::string>& words) {
    const std::set<std::string> keys = plan_keys_of(words);
    return std::any_of(keys.begin(), keys.end(),
                       [&](const std::string& k) { return changed.contains(k); });
  };
  std::string out = "trainmem estimate";
  const auto start = std::find(typed.begin(), typed.end(), "advise");
  std::vector<std::string> words(start == typed.end() ? typed.begin() : start + 1, typed.end());
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--json") continue;
    if (w.starts_with("--")) {
      const bool has_value = i + 1 < words.size() && !words[i + 1].starts_with("-");
      if (has_value && changes({w, words[i + 1]})) {
        ++i;  // the flag and its value
        continue;
      }
      if (changes({w})) continue;
    }
    out += " " + shell_word(w);
  }
  return out + " " + flags;
}

// Why the list is empty, in a sentence: it fits already with nothing left to gain, or even the
// strongest change in the list leaves it over the device.
std::string empty_advice(const Advice& adv, const TrainingPlan& plan, Unit u) {
  if (adv.fits_now) {
    return "It fits as planned, and no change in trainmem's list lowers the peak further.";
  }
  return fmt::format(
      "Every change in trainmem's list is already in this {} plan or does not lower its peak, "
      "which stays over the {} usable on one {}: a larger device, or a multi-GPU layout "
      "(ZeRO/FSDP), is needed.",
      name_of(plan.method), format_bytes(adv.now.usable_bytes, u), adv.now.device.name);
}

int run_advise(const AdviseArgs& a, const std::vector<std::string>& typed) {
  auto in = read_pricing_inputs(a.model, a.plan, a.device, a.output);
  if (!in) return report(in.error());
  if (!in->device) {
    return report(Error{ErrorCode::usage, "", "--gpu", "advise needs --gpu NAME or --memory SIZE"});
  }
  auto data = apply_dataset(a, in.value());
  if (!data) return report(data.error());

  Advice adv = advise(in->model, in->plan, *in->device);
  if (*data) add_dataset_options(**data, in->plan, adv);
  add_layout_options(in->model, in->plan, *in->device, adv);
  const Unit u = in->options.unit;
  if (a.output.json) {
    // The library's document, with the complete command for each option (the user's own
    // arguments with the option's flags appended) and why the list is empty when it is.
    nlohmann::json j = nlohmann::json::parse(render_advice_json(adv, model_label(a.model, *in)));
    for (std::size_t i = 0; i < adv.options.size(); ++i) {
      j["options"][i]["command"] = command_for(typed, adv.options[i].flags);
    }
    if (adv.options.empty()) j["why_no_options"] = empty_advice(adv, in->plan, u);
    std::string doc = j.dump(2) + "\n";
    if (*data) doc = with_dataset_json(doc, **data);
    std::cout << doc;
    return 0;
  }
  const Fit& n = adv.now;
  std::cout << fmt::format(
      "{} on {}: {} {} against {} usable — {}\n\n", model_label(a.model, *in), n.device.name,
      n.figure, format_bytes(n.peak_bytes, u), format_bytes(n.usable_bytes, u),
      n.fits ? fmt::format("fits, {} free", format_bytes(n.margin_bytes, u))
             : fmt::format("does not fit, over by {}", format_bytes(-n.margin_bytes, u)));
  if (*data) {
    std::cout << fmt::format("Advised at the dataset's longest record: {} x {} tokens.\n",
                             in->plan.batch, with_commas(in->plan.seq))
              << render_dataset_text(**data, in->options) << "\n";
  }
  if (adv.options.empty()) {
    std::cout << empty_advice(adv, in->plan, u) << "\n";
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
        "{:>3}. {}\n     {}\n     {} {} ({}{}) — cost: {}\n", ++i, o.change,
        command_for(typed, o.flags), n.figure, format_bytes(o.peak_bytes, u),
        o.fits ? "fits, " : "over by ",
        format_bytes(o.fits ? o.margin_bytes : -o.margin_bytes, u) + (o.fits ? " free" : ""),
        o.cost);
  }
  return 0;
}

}  // namespace

void register_advise(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<AdviseArgs>();
  CLI::App* cmd = app.add_subcommand("advise", "What to change so the plan fits, cheapest first");
  cmd->add_option("model", args->model, "preset, HF id, config.json, or a folder (or --from)");
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  add_dataset_flag(*cmd, args->dataset);
  commands.on(cmd, [args, &commands] { return run_advise(*args, commands.args); });
}

}  // namespace trainmem::cli

// trainmem estimate MODEL [flags] and trainmem explain MODEL [flags].
#include "trainmem/estimate.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dataset.h"
#include "flags.h"
#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem::cli {
namespace {

struct EstimateArgs {
  std::string model;
  PlanFlags plan;
  DeviceFlags device;
  OutputFlags output;
  bool fail_if_over = false;
  std::string svg;       // --svg FILE: the budget as a stacked bar
  std::string timeline;  // --timeline [phases|events]: memory through the step
  std::string dataset;   // --dataset FILE: the plan at the records' lengths
};

// `document` with `member` (a JSON document too) added under `key`: --timeline with --json.
std::string with_member(const std::string& document, const char* key, const std::string& member) {
  nlohmann::json j = nlohmann::json::parse(document);
  j[key] = nlohmann::json::parse(member);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// A plan over several GPUs (or with offload): per-rank ledgers and the host per node.
GpuOptions gpu_options(const TrainingPlan& plan, const std::optional<Device>& device);

// Per rank: judge_distributed() (the most-loaded rank replayed and judged like one GPU).
int run_distributed(const EstimateArgs& a, const PricingInputs& in, bool explain,
                    const std::optional<DatasetFit>& data) {
  auto v = judge_distributed(in.model, in.plan, in.device, gpu_options(in.plan, in.device));
  if (!v) return report(v.error());
  // The plan's notes (what --from read, the defaults it took) first, as one GPU's report has them.
  v->estimate.notes.insert(v->estimate.notes.begin(), in.notes.begin(), in.notes.end());
  const DistributedEstimate& d = v->estimate;
  const Ledger& most = d.ranks[d.most_loaded].ledger;
  const GpuEstimate* gpu = &v->gpu;
  const bool cuda = !in.device || in.device->kind != DeviceKind::unified;
  const Fit* f = v->fit ? &*v->fit : nullptr;
  if (!a.svg.empty()) {
    std::ofstream svg_out(a.svg);
    svg_out << render_svg_budget(most, f, in.options);
    if (!svg_out) return report(bad_input(a.svg, "--svg", "cannot write the file"));
  }
  if (a.output.json) {
    std::string doc = render_distributed_json(d, f, cuda ? gpu : nullptr);
    std::cout << (data ? with_dataset_json(doc, *data) : doc);
  } else if (explain) {
    std::cout << render_distributed_explain(d, in.options, cuda ? gpu : nullptr);
    if (data) std::cout << "\n" << render_dataset_text(*data, in.options);
  } else {
    std::cout << render_distributed_text(d, f, in.options);
    if (cuda && gpu->available) {
      std::cout << "\nMost-loaded rank " << render_gpu_text(*gpu, in.options);
    }
    if (!a.timeline.empty()) std::cout << "\n" << render_timeline(most, in.options);
    if (data) std::cout << "\n" << render_dataset_text(*data, in.options);
  }
  return (a.fail_if_over && f != nullptr && !f->fits) ? 3 : 0;
}

// The plan's allocator configuration (--alloc-conf, else PYTORCH_CUDA_ALLOC_CONF: flags.cpp
// import_plan) on the device, and how CUDA loads its modules.
GpuOptions gpu_options(const TrainingPlan& plan, const std::optional<Device>& device) {
  GpuOptions o = gpu_options_for(device, plan);
  if (const char* loading = std::getenv("CUDA_MODULE_LOADING")) {
    o.lazy_loading = std::string(loading) != "EAGER";
  }
  return o;
}

// The figure the verdict judges and the verdict, as run_estimate prices a plan: judge() on one
// GPU, judge_distributed() (the most-loaded rank) on several.
Result<LengthPrice> price_as_estimate(const PricingInputs& in, const GpuOptions& gopt,
                                      const TrainingPlan& plan) {
  if (auto e = check_plan_size(in.model, plan)) return *e;
  LengthPrice out;
  if (!is_single_device(plan.layout)) {
    auto v = judge_distributed(in.model, plan, in.device, gopt);
    if (!v) return v.error();
    out.fit = v->fit;
    out.peak_bytes =
        v->fit ? v->fit->peak_bytes : v->estimate.ranks[v->estimate.most_loaded].totals.peak_bytes;
    return out;
  }
  const Ledger ledger = estimate(in.model, plan);
  out.peak_bytes = totals(ledger).peak_bytes;
  if (!in.device) return out;
  auto f = judge(in.model, plan, ledger, *in.device, gopt);
  if (!f) return f.error();
  out.fit = *f;
  out.peak_bytes = f->peak_bytes;
  return out;
}

int run_estimate(const EstimateArgs& a, bool explain) {
  auto in = read_pricing_inputs(a.model, a.plan, a.device, a.output);
  if (!in) return report(in.error());
  // A gate with nothing to judge against would always pass: a script would never learn.
  if (a.fail_if_over && !in->device) {
    return report(Error{ErrorCode::usage, "", "--fail-if-over",
                        "needs a device to judge against: --gpu or --memory"});
  }

  if (!a.timeline.empty() && a.timeline != "phases" && a.timeline != "events") {
    return report(Error{ErrorCode::usage, "", "--timeline",
                        "expected phases or events, got '" + a.timeline + "'"});
  }
  std::optional<DatasetFit> data;
  if (!a.dataset.empty()) {
    auto d = price_dataset(a.dataset, *in, [&](const TrainingPlan& p) {
      return price_as_estimate(*in, gpu_options(in->plan, in->device), p);
    });
    if (!d) return report(d.error());
    data = std::move(d).value();
  }
  if (!is_single_device(in->plan.layout)) return run_distributed(a, *in, explain, data);
  Ledger ledger = estimate(in->model, in->plan);
  ledger.notes.insert(ledger.notes.begin(), in->notes.begin(), in->notes.end());
  GpuOptions gopt = gpu_options(in->plan, in->device);
  if (data) gopt.step_lengths = data->step_lengths;  // the run over the dataset's batches
  auto gpu = gpu_estimate(in->model, in->plan, ledger, gopt);
  if (!gpu) return report(gpu.error());
  std::optional<Fit> verdict;
  if (in->device) verdict = judge(*gpu, totals(ledger), *in->device);
  const Fit* f = verdict ? &*verdict : nullptr;
  // Apple unified memory has no CUDA allocator or context: no GPU figures there.
  const bool cuda = !in->device || in->device->kind != DeviceKind::unified;
  if (!a.svg.empty()) {
    std::ofstream svg_out(a.svg);
    svg_out << render_svg_budget(ledger, f, in->options);
    if (!svg_out) return report(bad_input(a.svg, "--svg", "cannot write the file"));
  }
  if (a.output.json) {
    std::string doc = render_json(ledger, f, cuda ? &*gpu : nullptr);
    if (data) doc = with_dataset_json(doc, *data);
    // --timeline: the phases as the web page draws them; the events in a traced loop's schema.
    if (a.timeline == "phases") doc = with_member(doc, "timeline", render_timeline_json(ledger));
    if (a.timeline == "events" && cuda) {
      const std::string events = render_alloc_events_json(in->model, in->plan, ledger, gopt);
      if (!events.empty()) doc = with_member(doc, "alloc_events", events);
    }
    std::cout << doc;
  } else if (explain) {
    std::cout << render_explain(ledger, in->options, cuda && gpu->available ? &*gpu : nullptr);
    if (data) std::cout << "\n" << render_dataset_text(*data, in->options);
  } else {
    std::cout << render_text(ledger, f, in->options);
    if (cuda && gpu->available) std::cout << "\n" << render_gpu_text(*gpu, in->options);
    // A seed tier is judged as the seeds judge it, on the peak against its capacity less 2 GB;
    // the figures above are what a CUDA card of that size would show.
    if (in->device && in->device->kind == DeviceKind::tier && cuda && gpu->available) {
      std::cout << "  The tier's verdict is the seeds': the peak against its capacity less its "
                   "reserve, which stands in for the context and the allocator's cache above.\n";
    }
    if (a.timeline == "phases") std::cout << "\n" << render_timeline(ledger, in->options);
    if (a.timeline == "events") {
      std::cout << "\n" << render_alloc_timeline(in->model, in->plan, ledger, gopt, in->options);
    }
    if (data) std::cout << "\n" << render_dataset_text(*data, in->options);
  }
  // Exit 3 only on request, so scripts can gate on "does not fit".
  return (a.fail_if_over && f != nullptr && !f->fits) ? 3 : 0;
}

void add(CLI::App& app, Commands& commands, const std::string& name, const std::string& help,
         bool explain) {
  auto args = std::make_shared<EstimateArgs>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("model", args->model,
                  "preset (qwen3-8b), HF id (Qwen/Qwen3-8B), config.json, a folder, or none "
                  "when a --from file names the model");
  add_plan_flags(*cmd, args->plan);
  add_device_flags(*cmd, args->device);
  add_output_flags(*cmd, args->output);
  cmd->add_flag("--fail-if-over", args->fail_if_over, "exit 3 when the plan does not fit");
  cmd->add_option("--svg", args->svg, "also write the budget as an SVG stacked bar to FILE");
  cmd->add_option("--timeline", args->timeline,
                  "also show memory through the step: phases (the default), or events (every "
                  "allocation and free, with the caching allocator's figures)")
      ->expected(0, 1)
      ->default_str("phases");
  add_dataset_flag(*cmd, args->dataset);
  commands.on(cmd, [args, explain] { return run_estimate(*args, explain); });
}

}  // namespace

void register_estimate(CLI::App& app, Commands& commands) {
  add(app, commands, "estimate", "Itemised memory of a training step and its peak", false);
}

void register_explain(CLI::App& app, Commands& commands) {
  add(app, commands, "explain", "The arithmetic behind every line of the estimate", true);
}

}  // namespace trainmem::cli

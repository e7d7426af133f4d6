// trainmem validate FILE [--json]: the estimator against measured peaks, row by row, with the
// median, p95 and worst absolute percentage error overall and per category.
#include "trainmem/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "flags.h"
#include "row_layout.h"
#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem::cli {
namespace {

namespace fs = std::filesystem;

struct ValidateArgs {
  std::string file;
  bool json = false;
  double max_median = -1;  // fail (exit 1) when exceeded; < 0: no bound
  double max_error = -1;
  double max_family_median = -1;  // per family (model_type); < 0: no bound
  double max_family_error = -1;
};

// A layout error names a flag (--tp); from a row it names the row's field (config.layout.tp) and
// is the file's fault (exit 1), not a usage error.
Error row_error(Error e, const std::string& where) {
  if (e.field.rfind("--", 0) == 0) {
    std::string key = e.field.substr(2);
    for (char& ch : key) ch = ch == '-' ? '_' : ch;
    e.field = "config.layout." + key;
    e.code = ErrorCode::bad_input;
  }
  e.file = where;
  return e;
}

// A record's plan, in flag vocabulary, through the same parser as the command line.
Result<TrainingPlan> plan_of(const MeasurementRecord& r) {
  PlanFlags f;
  const std::vector<std::string>& keys = plan_setting_keys();
  // A key no setting reads (a typo such as "checkpointng") would price the row without it.
  for (const auto& [key, value] : r.plan) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    const std::string near = nearest_name(key, keys, 3);
    return Error{ErrorCode::bad_input, "", "config." + key,
                 fmt::format("not a plan setting{}",
                             near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near))};
  }
  // Rows use the plan setting keys (snake_case flag names), so they apply as typed settings.
  for (const std::string& key : keys) {
    if (auto it = r.plan.find(key); it != r.plan.end()) {
      f.given.push_back({key, it->second, "config." + key, true});
    }
  }
  auto layout = layout_flags_of(r.layout, r.id);
  if (!layout) return layout.error();
  f.layout = layout.value();
  auto plan = make_plan(f);
  if (!plan) return plan.error();
  return plan->plan;
}

// Rows name their config repo-relative; accept them from the repo root or beside the data file.
std::string resolve_model(const std::string& model, const std::string& data_file) {
  if (fs::exists(model)) return model;
  const fs::path beside = fs::path(data_file).parent_path().parent_path().parent_path() / model;
  return fs::exists(beside) ? beside.string() : model;
}

std::array<std::int64_t, 4> predicted_categories(const Ledger& ledger, int slot) {
  std::array<std::int64_t, 4> out{};
  for (const LedgerItem& i : ledger.items) {
    if (!(i.live & (PhaseMask{1} << slot))) continue;
    switch (i.tenant) {
      case Tenant::weights:
        out[0] += i.bytes;
        break;
      case Tenant::gradients:
        out[1] += i.bytes;
        break;
      case Tenant::optimizer_states:
      case Tenant::master_weights:
        out[2] += i.bytes;
        break;
      case Tenant::activations:
      case Tenant::logits:
      case Tenant::temporaries:
        out[3] += i.bytes;
        break;
      case Tenant::overhead:
        break;
    }
  }
  return out;
}

std::array<std::int64_t, 4> measured_categories(const MeasurementRecord& r) {
  const auto& c = r.by_category;
  return {c[0], c[1], c[2], c[3] + c[4]};
}

// The device a GPU row ran on, for the allocator replay: its compute capability and what a
// process may hold on it (device_id, else the name nvidia-smi printed), with the row's
// PYTORCH_CUDA_ALLOC_CONF (its plan's alloc_conf setting) and CUDA runtime. Unknown devices
// replay without a limit (a note in the docs).
GpuOptions row_gpu_options(const MeasurementRecord& r, const TrainingPlan& plan) {
  std::optional<Device> device;
  for (const std::string& name : {r.device_id, r.device_name}) {
    if (name.empty() || device) continue;
    if (auto d = find_device(name)) device = d.value();
  }
  TrainingPlan with_runtime = plan;  // read_measurements checked the version
  if (!r.cuda_version.empty()) with_runtime.library_versions.emplace_back("cuda", r.cuda_version);
  GpuOptions o = gpu_options_for(device, with_runtime);
  o.step_lengths = r.step_lengths;
  return o;
}

// The figure a GPU row's metric names, and the slot where it peaks.
Result<std::pair<std::int64_t, int>> gpu_figure(const MeasurementRecord& r,
                                                const LoadedModel& model, const TrainingPlan& plan,
                                                const Ledger& ledger) {
  auto gpu = gpu_estimate(model, plan, ledger, row_gpu_options(r, plan));
  if (!gpu) return gpu.error();
  const GpuEstimate& g = gpu.value();
  // A row that states its run's lengths is the run: its figures, not a step's at the plan's
  // length (which the estimate keeps as a floor for the steps a replayed run did not meet).
  if (g.run_steps > 0) {
    if (r.metric == "max_memory_allocated") {
      return std::pair{g.run_peak_allocated_bytes, g.run_peak_allocated_slot};
    }
    if (r.metric == "max_memory_reserved") {
      return std::pair{g.run_peak_reserved_bytes, g.run_peak_slot};
    }
    return std::pair{g.run_device_total_bytes, g.run_peak_slot};
  }
  if (r.metric == "max_memory_allocated") {
    return std::pair{g.peak_allocated_bytes, g.peak_allocated_slot};
  }
  if (r.metric == "max_memory_reserved") return std::pair{g.peak_reserved_bytes, g.peak_slot};
  return std::pair{g.device_total_bytes, g.peak_slot};
}

// Each record priced like the run it measured: a CPU trace against the ledger's live peak (less
// the overhead tenant a trace cannot see), a GPU figure against the allocator replay's matching
// figure, a multi-rank row against the most-loaded rank of its layout.
Result<AccuracyRow> price_record(const MeasurementRecord& r, const std::string& file) {
  auto plan = plan_of(r);
  if (!plan) return row_error(plan.error(), file + " " + r.id);
  auto model = load_model(resolve_model(r.model, file));
  if (!model) {
    // The model's own error, under the row that names it.
    return Error{ErrorCode::bad_input, file + " " + r.id, "config.model", model.error().message()};
  }
  // CPU traces see tensors only: no CUDA context or allocator slack, so the overhead tenant is
  // left out of the prediction for them; and they ran PyTorch's CPU kernels (dropout noise
  // tensors, SDPA math with dropout), which the plan prices when asked (docs/accuracy.md).
  const bool traced = r.device.empty() || r.device == "cpu";
  plan->cpu_kernels = traced;
  // trainmem's harness builds each optimizer from its class (validation/harness/optim.py,
  // cuda.py), as a custom loop does, not through the HF Trainer, whose 32-bit override of the
  // embeddings under an 8-bit bitsandbytes optimizer therefore never ran in its rows.
  if (r.tracker != "published") plan->behaviour.bnb_embeddings_32bit = false;
  // A run of lengths is the allocator replay of the steps (run_events): a GPU figure.
  if (!r.step_lengths.empty() && r.metric.empty()) {
    return Error{ErrorCode::bad_input, file + " " + r.id, "config.step_lengths",
                 "a run of lengths is replayed for GPU rows only (measured.metric)"};
  }
  for (std::size_t k = 0; k < r.step_lengths.size(); ++k) {
    if (r.step_lengths[k] > plan->seq) {
      return Error{
          ErrorCode::bad_input, file + " " + r.id, fmt::format("config.step_lengths[{}]", k),
          fmt::format("{} tokens is longer than the row's seq, {}", r.step_lengths[k], plan->seq)};
    }
  }
  if (auto e = validate_layout(plan->layout, model->spec)) return row_error(*e, file + " " + r.id);
  // A multi-rank row is compared with the most-loaded rank of the same layout (its measured
  // peak is the largest of its ranks'; validation/distributed.py).
  const Ledger ledger = is_single_device(plan->layout)
                            ? estimate(model.value(), plan.value())
                            : most_loaded_ledger(model.value(), plan.value());
  const Totals t = totals(ledger);
  AccuracyRow row;
  row.id = r.id;
  row.measured_peak_bytes = r.peak_bytes;
  row.family = model->spec.model_type;
  row.source = r.source;
  if (!r.metric.empty()) {
    auto figure = gpu_figure(r, model.value(), plan.value(), ledger);
    if (!figure) {
      return Error{figure.error().code, file + " " + r.id, figure.error().field,
                   figure.error().reason};
    }
    row.predicted_peak_bytes = figure->first;
    row.measured_phase = r.metric;
    row.predicted_phase = slot_name(figure->second);
    row.metric = r.metric;
    return row;
  }
  const std::int64_t overhead = t.by_tenant[static_cast<std::size_t>(Tenant::overhead)];
  row.predicted_peak_bytes = t.peak_bytes - (traced ? overhead : 0);
  row.measured_phase = r.peak_phase + (r.peak_step ? fmt::format(" (step {})", r.peak_step) : "");
  row.predicted_phase = slot_name(t.peak_slot);
  row.measured_by_category = measured_categories(r);
  row.predicted_by_category = predicted_categories(ledger, t.peak_slot);
  return row;
}

// --max-median-error and friends: exit 1 when a bound is exceeded, naming it.
int check_bounds(const ValidateArgs& a, const ValidationReport& v) {
  for (const auto& [family, s] : v.by_family) {
    const bool over = (a.max_family_median >= 0 && s.median_abs_pct > a.max_family_median) ||
                      (a.max_family_error >= 0 && s.max_abs_pct > a.max_family_error);
    if (over) {
      std::cerr << fmt::format(
          "trainmem: error: accuracy bound exceeded for family {} (median {:.2f}% vs {}%, max "
          "{:.2f}% vs {}%)\n",
          family, s.median_abs_pct, a.max_family_median, s.max_abs_pct, a.max_family_error);
      return 1;
    }
  }
  const ErrorStats& p = v.summary.peak;
  if ((a.max_median >= 0 && p.median_abs_pct > a.max_median) ||
      (a.max_error >= 0 && p.max_abs_pct > a.max_error)) {
    std::cerr << fmt::format(
        "trainmem: error: accuracy bound exceeded (median {:.2f}% vs {}%, "
        "max {:.2f}% vs {}%)\n",
        p.median_abs_pct, a.max_median, p.max_abs_pct, a.max_error);
    return 1;
  }
  return 0;
}

int run_validate(const ValidateArgs& a) {
  auto records = read_measurements(a.file);
  if (!records) return report(records.error());
  std::vector<AccuracyRow> rows;
  for (const MeasurementRecord& r : records.value()) {
    auto row = price_record(r, a.file);
    if (!row) return report(row.error());
    rows.push_back(std::move(row).value());
  }
  const ValidationReport v = validation_report(a.file, std::move(rows));
  std::cout << (a.json ? render_validation_json(v) : render_validation_text(v));
  return check_bounds(a, v);
}

}  // namespace

namespace {

// A percentage bound: finite and >= 0 (a negative value would read as "not given", NaN as no
// bound at all).
const CLI::Validator kPercentage(
    [](std::string& text) -> std::string {
      try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size() && std::isfinite(v) && v >= 0) return "";
      } catch (const std::exception&) {
      }
      return "must be a percentage >= 0, got '" + text + "'";
    },
    "PERCENT");

}  // namespace

void register_validate(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand("validate", "Compare the estimator with measured peaks");
  cmd->add_option("file", args->file, "measurements (validation/data/*.jsonl)")->required();
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->add_option("--max-median-error", args->max_median,
                  "exit 1 if the median absolute peak error exceeds this percentage")
      ->check(kPercentage);
  cmd->add_option("--max-error", args->max_error,
                  "exit 1 if the worst absolute peak error exceeds this percentage")
      ->check(kPercentage);
  cmd->add_option("--max-family-median-error", args->max_family_median,
                  "exit 1 if any family's median absolute peak error exceeds this percentage")
      ->check(kPercentage);
  cmd->add_option("--max-family-error", args->max_family_error,
                  "exit 1 if any family's worst absolute peak error exceeds this percentage")
      ->check(kPercentage);
  commands.on(cmd, [args] { return run_validate(*args); });
}

}  // namespace trainmem::cli

// trainmem validate FILE [--json]: the estimator against measured peaks, row by row, with the
// median, p95 and worst absolute percentage error overall and per category.
#include "trainmem/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "flags.h"
#include "row_layout.h"
#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/estimate.h"
#include "trainmem/gpu.h"
#include "trainmem/layout.h"

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
  // Rows use the plan setting keys (snake_case flag names), so they apply as typed settings.
  for (const std::string& key : plan_setting_keys()) {
    if (auto it = r.plan.find(key); it != r.plan.end()) {
      f.given.push_back({key, it->second, r.id + ": " + key, true});
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

Ledger most_loaded_ledger(const LoadedModel& model, const TrainingPlan& plan) {
  DistributedEstimate d = estimate_distributed(model, plan);
  return std::move(d.ranks[d.most_loaded].ledger);
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

nlohmann::json stats_json(const ErrorStats& s) {
  return {{"rows", s.rows},
          {"median_abs_pct_error", s.median_abs_pct},
          {"p95_abs_pct_error", s.p95_abs_pct},
          {"max_abs_pct_error", s.max_abs_pct},
          {"mean_signed_pct_error", s.mean_signed_pct}};
}

struct RowGroup {
  std::string metric;  // "" for CPU traces
  std::string source;
};

// The device a GPU row ran on, for the allocator replay: its compute capability and what a
// process may hold on it. Unknown devices replay without a limit (a note in the docs).
GpuOptions row_gpu_options(const MeasurementRecord& r) {
  std::string conf;  // the row's PYTORCH_CUDA_ALLOC_CONF (harness rows with expandable segments)
  if (auto it = r.plan.find("alloc_conf"); it != r.plan.end()) conf = it->second;
  if (!r.device_id.empty()) {
    if (auto d = find_device(r.device_id)) return gpu_options_for(d.value(), conf);
  }
  GpuOptions o;
  o.alloc_conf = conf;
  return o;
}

// The figure a GPU row's metric names, and the slot where it peaks.
Result<std::pair<std::int64_t, int>> gpu_figure(const MeasurementRecord& r,
                                                const LoadedModel& model, const TrainingPlan& plan,
                                                const Ledger& ledger) {
  auto gpu = gpu_estimate(model, plan, ledger, row_gpu_options(r));
  if (!gpu) return gpu.error();
  const GpuEstimate& g = gpu.value();
  if (r.metric == "max_memory_allocated") return std::pair{g.peak_allocated_bytes, g.peak_slot};
  if (r.metric == "max_memory_reserved") return std::pair{g.peak_reserved_bytes, g.peak_slot};
  return std::pair{g.device_total_bytes, g.peak_slot};
}

// Error statistics of the rows whose group matches `keep`, keyed by `key`, in first-seen order.
template <class Key>
std::vector<std::pair<std::string, ErrorStats>> grouped_stats(const std::vector<AccuracyRow>& rows,
                                                              const std::vector<RowGroup>& groups,
                                                              Key key) {
  std::vector<std::string> names;
  std::vector<std::vector<double>> errors;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string k = key(groups[i]);
    if (k.empty()) continue;
    auto it = std::find(names.begin(), names.end(), k);
    if (it == names.end()) {
      names.push_back(k);
      errors.emplace_back();
      it = names.end() - 1;
    }
    errors[static_cast<std::size_t>(it - names.begin())].push_back(
        pct_error(rows[i].predicted_peak_bytes, rows[i].measured_peak_bytes));
  }
  std::vector<std::pair<std::string, ErrorStats>> out;
  for (std::size_t i = 0; i < names.size(); ++i) out.emplace_back(names[i], error_stats(errors[i]));
  return out;
}

int run_validate(const ValidateArgs& a) {
  auto records = read_measurements(a.file);
  if (!records) return report(records.error());
  std::vector<AccuracyRow> rows;
  std::vector<RowGroup> groups;  // per row: its metric and source
  for (const MeasurementRecord& r : records.value()) {
    auto plan = plan_of(r);
    if (!plan) return report(row_error(plan.error(), a.file + " " + r.id));
    auto model = load_model(resolve_model(r.model, a.file));
    if (!model) return report(model.error());
    // CPU traces see tensors only: no CUDA context or allocator slack, so the overhead tenant is
    // left out of the prediction for them; and they ran PyTorch's CPU kernels (dropout noise
    // tensors, SDPA math with dropout), which the plan prices when asked (docs/accuracy.md).
    const bool traced = r.device.empty() || r.device == "cpu";
    plan->cpu_kernels = traced;
    if (auto e = validate_layout(plan->layout, model->spec)) {
      return report(row_error(*e, a.file + " " + r.id));
    }
    // A multi-rank row is compared with the most-loaded rank of the same layout (its measured
    // peak is the largest of its ranks'; validation/distributed.py).
    const Ledger ledger = is_single_device(plan->layout)
                              ? estimate(model.value(), plan.value())
                              : most_loaded_ledger(model.value(), plan.value());
    const Totals t = totals(ledger);
    if (!r.metric.empty()) {
      // A GPU figure: compare like with like (the allocator replay's matching figure).
      auto figure = gpu_figure(r, model.value(), plan.value(), ledger);
      if (!figure)
        return report(Error{figure.error().code, a.file + " " + r.id, figure.error().field,
                            figure.error().reason});
      rows.push_back({r.id,
                      r.peak_bytes,
                      figure->first,
                      r.metric,
                      slot_name(figure->second),
                      {},
                      {},
                      model->spec.model_type});
      groups.push_back({r.metric, r.source});
      continue;
    }
    const std::int64_t overhead = t.by_tenant[static_cast<std::size_t>(Tenant::overhead)];
    rows.push_back({r.id, r.peak_bytes, t.peak_bytes - (traced ? overhead : 0),
                    r.peak_phase + (r.peak_step ? fmt::format(" (step {})", r.peak_step) : ""),
                    slot_name(t.peak_slot), measured_categories(r),
                    predicted_categories(ledger, t.peak_slot), model->spec.model_type});
    groups.push_back({"", r.source});
  }
  const AccuracyReport rep = accuracy_report(rows);
  const auto families = family_stats(rows);
  const auto by_metric = grouped_stats(rows, groups, [](const RowGroup& g) { return g.metric; });
  const auto by_source = grouped_stats(rows, groups, [](const RowGroup& g) { return g.source; });
  nlohmann::json by_metric_json = nlohmann::json::object();
  for (const auto& [k, st] : by_metric) by_metric_json[k] = stats_json(st);
  nlohmann::json by_source_json = nlohmann::json::object();
  for (const auto& [k, st] : by_source) by_source_json[k] = stats_json(st);
  if (a.json) {
    nlohmann::json per_row = nlohmann::json::array();
    for (const AccuracyRow& r : rows) {
      per_row.push_back({{"id", r.id},
                         {"family", r.family},
                         {"measured_peak_bytes", r.measured_peak_bytes},
                         {"predicted_peak_bytes", r.predicted_peak_bytes},
                         {"pct_error", pct_error(r.predicted_peak_bytes, r.measured_peak_bytes)},
                         {"measured_phase", r.measured_phase},
                         {"predicted_phase", r.predicted_phase}});
      const RowGroup& g = groups[per_row.size() - 1];
      if (!g.metric.empty()) per_row.back()["metric"] = g.metric;
      if (!g.source.empty()) per_row.back()["source"] = g.source;
    }
    nlohmann::json by_category = nlohmann::json::object();
    for (std::size_t c = 0; c < kCompareCategories.size(); ++c) {
      by_category[kCompareCategories[c]] = stats_json(rep.by_category[c]);
    }
    nlohmann::json by_family = nlohmann::json::object();
    for (const auto& [family, s] : families) by_family[family] = stats_json(s);
    nlohmann::json doc = {{"schema", "trainmem.validation/1"},
                          {"file", a.file},
                          {"rows", rows.size()},
                          {"median_abs_pct_error", rep.peak.median_abs_pct},
                          {"p95_abs_pct_error", rep.peak.p95_abs_pct},
                          {"max_abs_pct_error", rep.peak.max_abs_pct},
                          {"mean_signed_pct_error", rep.peak.mean_signed_pct},
                          {"by_category", by_category},
                          {"by_family", by_family},
                          {"by_metric", by_metric_json},
                          {"by_source", by_source_json},
                          {"per_row", per_row}};
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    fmt::print("{:<64} {:>14} {:>14} {:>8}\n", "configuration", "measured MiB", "predicted MiB",
               "error");
    for (const AccuracyRow& r : rows) {
      fmt::print("{:<64} {:>14.1f} {:>14.1f} {:>+7.1f}%\n", r.id,
                 static_cast<double>(r.measured_peak_bytes) / (1 << 20),
                 static_cast<double>(r.predicted_peak_bytes) / (1 << 20),
                 pct_error(r.predicted_peak_bytes, r.measured_peak_bytes));
    }
    fmt::print("\n{} rows: peak error median {:.2f}%, p95 {:.2f}%, max {:.2f}%, bias {:+.2f}%\n",
               rows.size(), rep.peak.median_abs_pct, rep.peak.p95_abs_pct, rep.peak.max_abs_pct,
               rep.peak.mean_signed_pct);
    for (std::size_t c = 0; c < kCompareCategories.size(); ++c) {
      const ErrorStats& s = rep.by_category[c];
      if (s.rows == 0) continue;
      fmt::print("  {:<22} median {:6.2f}%  p95 {:6.2f}%  max {:6.2f}%  ({} rows, at the peak)\n",
                 kCompareCategories[c], s.median_abs_pct, s.p95_abs_pct, s.max_abs_pct, s.rows);
    }
    fmt::print("\nper family (peak error):\n  {:<14} {:>5} {:>9} {:>9} {:>9}\n", "family", "rows",
               "median", "worst", "bias");
    for (const auto& [family, s] : families) {
      fmt::print("  {:<14} {:>5} {:>8.2f}% {:>8.2f}% {:>+8.2f}%\n", family, s.rows,
                 s.median_abs_pct, s.max_abs_pct, s.mean_signed_pct);
    }
    auto print_groups = [](const char* title,
                           const std::vector<std::pair<std::string, ErrorStats>>& list) {
      if (list.empty()) return;
      fmt::print("{}\n", title);
      for (const auto& [k, st] : list) {
        fmt::print("  {:<64} median {:6.2f}%  max {:6.2f}%  bias {:+6.2f}%  ({} rows)\n",
                   k.size() > 64 ? k.substr(0, 61) + "..." : k, st.median_abs_pct, st.max_abs_pct,
                   st.mean_signed_pct, st.rows);
      }
    };
    print_groups("by metric (each against the matching figure):", by_metric);
    print_groups("by source:", by_source);
  }
  const bool over = (a.max_median >= 0 && rep.peak.median_abs_pct > a.max_median) ||
                    (a.max_error >= 0 && rep.peak.max_abs_pct > a.max_error);
  for (const auto& [family, s] : families) {
    const bool family_over = (a.max_family_median >= 0 && s.median_abs_pct > a.max_family_median) ||
                             (a.max_family_error >= 0 && s.max_abs_pct > a.max_family_error);
    if (family_over) {
      std::cerr << fmt::format(
          "trainmem: error: accuracy bound exceeded for family {} (median {:.2f}% vs {}%, max "
          "{:.2f}% vs {}%)\n",
          family, s.median_abs_pct, a.max_family_median, s.max_abs_pct, a.max_family_error);
      return 1;
    }
  }
  if (over) {
    std::cerr << fmt::format(
        "trainmem: error: accuracy bound exceeded (median {:.2f}% vs {}%, "
        "max {:.2f}% vs {}%)\n",
        rep.peak.median_abs_pct, a.max_median, rep.peak.max_abs_pct, a.max_error);
    return 1;
  }
  return 0;
}

}  // namespace

void register_validate(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand("validate", "Compare the estimator with measured peaks");
  cmd->add_option("file", args->file, "measurements (validation/data/*.jsonl)")->required();
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->add_option("--max-median-error", args->max_median,
                  "exit 1 if the median absolute peak error exceeds this percentage");
  cmd->add_option("--max-error", args->max_error,
                  "exit 1 if the worst absolute peak error exceeds this percentage");
  cmd->add_option("--max-family-median-error", args->max_family_median,
                  "exit 1 if any family's median absolute peak error exceeds this percentage");
  cmd->add_option("--max-family-error", args->max_family_error,
                  "exit 1 if any family's worst absolute peak error exceeds this percentage");
  commands.on(cmd, [args] { return run_validate(*args); });
}

}  // namespace trainmem::cli

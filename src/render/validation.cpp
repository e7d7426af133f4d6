// `trainmem validate`'s two outputs: the trainmem.validation/1 document and the text table
// (docs/accuracy.md explains the figures; docs/formats.md the keys).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "trainmem/validate.h"
#include "verdict/accuracy.h"

namespace trainmem {
namespace {

using nlohmann::json;

json stats_json(const ErrorStats& s) {
  return {{"rows", s.rows},
          {"median_abs_pct_error", s.median_abs_pct},
          {"p95_abs_pct_error", s.p95_abs_pct},
          {"max_abs_pct_error", s.max_abs_pct},
          {"mean_signed_pct_error", s.mean_signed_pct}};
}

json grouped_json(const std::vector<std::pair<std::string, ErrorStats>>& groups) {
  json out = json::object();
  for (const auto& [k, s] : groups) out[k] = stats_json(s);
  return out;
}

}  // namespace

std::string render_validation_json(const ValidationReport& v) {
  json per_row = json::array();
  for (const AccuracyRow& r : v.rows) {
    json row = {{"id", r.id},
                {"family", r.family},
                {"measured_peak_bytes", r.measured_peak_bytes},
                {"predicted_peak_bytes", r.predicted_peak_bytes},
                {"pct_error", pct_error(r.predicted_peak_bytes, r.measured_peak_bytes)},
                {"measured_phase", r.measured_phase},
                {"predicted_phase", r.predicted_phase}};
    if (!r.metric.empty()) row["metric"] = r.metric;
    if (!r.source.empty()) row["source"] = r.source;
    per_row.push_back(std::move(row));
  }
  json by_category = json::object();
  for (std::size_t c = 0; c < kCompareCategories.size(); ++c) {
    by_category[kCompareCategories[c]] = stats_json(v.summary.by_category[c]);
  }
  const json doc = {{"schema", "trainmem.validation/1"},
                    {"file", v.file},
                    {"rows", v.rows.size()},
                    {"median_abs_pct_error", v.summary.peak.median_abs_pct},
                    {"p95_abs_pct_error", v.summary.peak.p95_abs_pct},
                    {"max_abs_pct_error", v.summary.peak.max_abs_pct},
                    {"mean_signed_pct_error", v.summary.peak.mean_signed_pct},
                    {"by_category", by_category},
                    {"by_family", grouped_json(v.by_family)},
                    {"by_metric", grouped_json(v.by_metric)},
                    {"by_source", grouped_json(v.by_source)},
                    {"per_row", per_row}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_validation_text(const ValidationReport& v) {
  std::string out = fmt::format("{:<64} {:>14} {:>14} {:>8}\n", "configuration", "measured MiB",
                                "predicted MiB", "error");
  for (const AccuracyRow& r : v.rows) {
    out += fmt::format("{:<64} {:>14.1f} {:>14.1f} {:>+7.1f}%\n", r.id,
                       static_cast<double>(r.measured_peak_bytes) / (1 << 20),
                       static_cast<double>(r.predicted_peak_bytes) / (1 << 20),
                       pct_error(r.predicted_peak_bytes, r.measured_peak_bytes));
  }
  const ErrorStats& p = v.summary.peak;
  out +=
      fmt::format("\n{} rows: peak error median {:.2f}%, p95 {:.2f}%, max {:.2f}%, bias {:+.2f}%\n",
                  v.rows.size(), p.median_abs_pct, p.p95_abs_pct, p.max_abs_pct, p.mean_signed_pct);
  for (std::size_t c = 0; c < kCompareCategories.size(); ++c) {
    const ErrorStats& s = v.summary.by_category[c];
    if (s.rows == 0) continue;
    out += fmt::format(
        "  {:<22} median {:6.2f}%  p95 {:6.2f}%  max {:6.2f}%  ({} rows, at the peak)\n",
        kCompareCategories[c], s.median_abs_pct, s.p95_abs_pct, s.max_abs_pct, s.rows);
  }
  out += fmt::format("\nper family (peak error):\n  {:<14} {:>5} {:>9} {:>9} {:>9}\n", "family",
                     "rows", "median", "worst", "bias");
  for (const auto& [family, s] : v.by_family) {
    out += fmt::format("  {:<14} {:>5} {:>8.2f}% {:>8.2f}% {:>+8.2f}%\n", family, s.rows,
                       s.median_abs_pct, s.max_abs_pct, s.mean_signed_pct);
  }
  const auto groups = [&out](const char* title,
                             const std::vector<std::pair<std::string, ErrorStats>>& list) {
    if (list.empty()) return;
    out += fmt::format("{}\n", title);
    for (const auto& [k, s] : list) {
      out += fmt::format("  {:<64} median {:6.2f}%  max {:6.2f}%  bias {:+6.2f}%  ({} rows)\n",
                         k.size() > 64 ? k.substr(0, 61) + "..." : k, s.median_abs_pct,
                         s.max_abs_pct, s.mean_signed_pct, s.rows);
    }
  };
  groups("by metric (each against the matching figure):", v.by_metric);
  groups("by source:", v.by_source);
  return out;
}

}  // namespace trainmem

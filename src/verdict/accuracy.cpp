#include "verdict/accuracy.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "trainmem/validate.h"

namespace trainmem {

double pct_error(std::int64_t predicted, std::int64_t measured) {
  if (measured == 0) return 0;
  return 100.0 * static_cast<double>(predicted - measured) / static_cast<double>(measured);
}

ErrorStats error_stats(const std::vector<double>& signed_pct_errors) {
  ErrorStats s;
  s.rows = signed_pct_errors.size();
  if (s.rows == 0) return s;
  std::vector<double> abs;
  double sum = 0;
  for (double e : signed_pct_errors) {
    abs.push_back(std::abs(e));
    sum += e;
  }
  std::sort(abs.begin(), abs.end());
  const std::size_t n = abs.size();
  s.median_abs_pct = n % 2 == 1 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2;
  // Nearest rank: the smallest value with at least 95% of the values at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(n)));
  s.p95_abs_pct = abs[std::max<std::size_t>(rank, 1) - 1];
  s.max_abs_pct = abs.back();
  s.mean_signed_pct = sum / static_cast<double>(n);
  return s;
}

std::vector<std::pair<std::string, ErrorStats>> family_stats(const std::vector<AccuracyRow>& rows) {
  std::map<std::string, std::vector<double>> by_family;
  for (const AccuracyRow& row : rows) {
    if (row.family.empty()) continue;
    by_family[row.family].push_back(pct_error(row.predicted_peak_bytes, row.measured_peak_bytes));
  }
  std::vector<std::pair<std::string, ErrorStats>> out;
  for (const auto& [family, errors] : by_family) out.emplace_back(family, error_stats(errors));
  return out;
}

AccuracyReport accuracy_report(const std::vector<AccuracyRow>& rows) {
  AccuracyReport r;
  std::vector<double> peak;
  std::array<std::vector<double>, 4> cat;
  for (const AccuracyRow& row : rows) {
    peak.push_back(pct_error(row.predicted_peak_bytes, row.measured_peak_bytes));
    for (std::size_t c = 0; c < cat.size(); ++c) {
      if (row.measured_by_category[c] > 0) {
        cat[c].push_back(pct_error(row.predicted_by_category[c], row.measured_by_category[c]));
      }
    }
  }
  r.peak = error_stats(peak);
  for (std::size_t c = 0; c < cat.size(); ++c) r.by_category[c] = error_stats(cat[c]);
  return r;
}

namespace {

template <class Key>
std::vector<std::pair<std::string, ErrorStats>> grouped_stats(const std::vector<AccuracyRow>& rows,
                                                              Key key) {
  std::vector<std::string> names;
  std::vector<std::vector<double>> errors;
  for (const AccuracyRow& row : rows) {
    const std::string& k = key(row);
    if (k.empty()) continue;
    auto it = std::find(names.begin(), names.end(), k);
    if (it == names.end()) {
      names.push_back(k);
      errors.emplace_back();
      it = names.end() - 1;
    }
    errors[static_cast<std::size_t>(it - names.begin())].push_back(
        pct_error(row.predicted_peak_bytes, row.measured_peak_bytes));
  }
  std::vector<std::pair<std::string, ErrorStats>> out;
  for (std::size_t i = 0; i < names.size(); ++i) out.emplace_back(names[i], error_stats(errors[i]));
  return out;
}

}  // namespace

std::vector<std::pair<std::string, ErrorStats>> metric_stats(const std::vector<AccuracyRow>& rows) {
  return grouped_stats(rows, [](const AccuracyRow& r) -> const std::string& { return r.metric; });
}

std::vector<std::pair<std::string, ErrorStats>> source_stats(const std::vector<AccuracyRow>& rows) {
  return grouped_stats(rows, [](const AccuracyRow& r) -> const std::string& { return r.source; });
}

ValidationReport validation_report(std::string file, std::vector<AccuracyRow> rows) {
  ValidationReport r;
  r.file = std::move(file);
  r.summary = accuracy_report(rows);
  r.by_family = family_stats(rows);
  r.by_metric = metric_stats(rows);
  r.by_source = source_stats(rows);
  r.rows = std::move(rows);
  return r;
}

}  // namespace trainmem

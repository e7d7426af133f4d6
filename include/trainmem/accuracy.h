// Accuracy of the estimator against measured peaks: per-row errors and their summary statistics.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace trainmem {

// Categories the measurement harness records (validation/README), matched to our tenants:
// parameters = weights; gradients; optimizer = optimizer states + master weights;
// activations = activations + logits; other = temporaries.
inline constexpr std::array<const char*, 5> kMeasuredCategories = {
    "parameters", "gradients", "optimizer", "activations", "other"};

struct AccuracyRow {
  std::string id;
  std::int64_t measured_peak_bytes = 0;
  std::int64_t predicted_peak_bytes = 0;
  std::string measured_phase;
  std::string predicted_phase;
  std::array<std::int64_t, 5> measured_by_category{};
  std::array<std::int64_t, 5> predicted_by_category{};
};

// (predicted - measured) / measured x 100.
double pct_error(std::int64_t predicted, std::int64_t measured);

struct ErrorStats {
  std::size_t rows = 0;
  double median_abs_pct = 0;
  double p95_abs_pct = 0;  // nearest-rank 95th percentile
  double max_abs_pct = 0;
  double mean_signed_pct = 0;  // bias: positive means the estimator over-predicts
};

// Statistics of a list of signed percentage errors.
ErrorStats error_stats(const std::vector<double>& signed_pct_errors);

struct AccuracyReport {
  ErrorStats peak;
  std::array<ErrorStats, 5> by_category;  // rows where the measured category is non-zero
};

AccuracyReport accuracy_report(const std::vector<AccuracyRow>& rows);

}  // namespace trainmem

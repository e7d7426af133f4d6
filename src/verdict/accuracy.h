// The accuracy statistics behind validation_report() (src/verdict/accuracy.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trainmem/validate.h"

namespace trainmem {

// (predicted - measured) / measured x 100.
double pct_error(std::int64_t predicted, std::int64_t measured);

// Statistics of a list of signed percentage errors.
ErrorStats error_stats(const std::vector<double>& signed_pct_errors);

AccuracyReport accuracy_report(const std::vector<AccuracyRow>& rows);

// Peak-error statistics of each family's rows, families in name order (rows without a family,
// such as published GPU figures, are left out).
std::vector<std::pair<std::string, ErrorStats>> family_stats(const std::vector<AccuracyRow>& rows);

// Peak-error statistics grouped by each row's metric, or by its source, in first-seen order (rows
// with an empty metric or source are left out).
std::vector<std::pair<std::string, ErrorStats>> metric_stats(const std::vector<AccuracyRow>& rows);
std::vector<std::pair<std::string, ErrorStats>> source_stats(const std::vector<AccuracyRow>& rows);

}  // namespace trainmem

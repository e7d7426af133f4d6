// --dataset FILE for estimate and advise: the plan priced at the records' token lengths
// (include/trainmem/import.h, docs/dataset.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "flags.h"
#include "trainmem/import.h"

namespace trainmem::cli {

void add_dataset_flag(CLI::App& cmd, std::string& file);

// advise: a usage error when --dataset is given with a multi-GPU layout (estimate prices it).
std::optional<Error> dataset_single_device(const std::string& file, const TrainingPlan& plan);

// Reads `file` and prices `in.plan` at its p50, p95 and longest record with `price`; the plan's
// sequence length, when the user set it, is the max_length that truncates them.
Result<DatasetFit> price_dataset(const std::string& file, const PricingInputs& in,
                                 const PricePlan& price);

}  // namespace trainmem::cli

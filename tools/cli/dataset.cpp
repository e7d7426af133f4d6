#include "dataset.h"

#include "trainmem/plan.h"

namespace trainmem::cli {

void add_dataset_flag(CLI::App& cmd, std::string& file) {
  cmd.add_option("--dataset", file,
                 "price the plan at a dataset's p50, p95 and longest record (tokens counted by a "
                 "tokenizer.json beside the config, else estimated): "
                 "FILE.jsonl / .json (TRL, axolotl, ShareGPT, Alpaca records) or .txt (a record "
                 "per line); --seq is the max_length that truncates them");
}

std::optional<Error> dataset_single_device(const std::string& file, const TrainingPlan& plan) {
  if (file.empty() || is_single_device(plan.layout)) return std::nullopt;
  return Error{ErrorCode::usage, "", "--dataset",
               "advise prices a dataset on one GPU; for a multi-GPU layout run `trainmem "
               "estimate ... --dataset FILE`, which prices the most-loaded rank"};
}

Result<DatasetFit> price_dataset(const std::string& file, const PricingInputs& in,
                                 const PricePlan& price) {
  auto text = read_dataset_file(file);
  if (!text) return text.error();
  DatasetSource source;
  source.file = file;
  source.text = *text;
  source.vocab_size = in.model.spec.vocab;
  source.tokenizer_file = tokenizer_file_beside(in.model);
  if (!in.seq_origin.empty()) source.max_length = in.plan.seq;
  source.context = in.model.spec.max_positions;
  source.unit = in.options.unit;
  return fit_dataset(source, in.plan, price);
}

}  // namespace trainmem::cli

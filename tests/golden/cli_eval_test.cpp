// Evaluation during training through the command line: --eval-strategy / --eval-batch, the
// importers' eval keys on realistic files (tests/data/import/*_eval.*), the report naming the
// evaluation at the peak, advise's smaller eval batch, and the errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::CliRun;
using trainmem::testing_support::contains;
using trainmem::testing_support::estimate_json;
using trainmem::testing_support::import_data;
using trainmem::testing_support::run_cli;

std::int64_t eval_line_bytes(const nlohmann::json& j) {
  std::int64_t n = 0;
  for (const auto& i : j["items"]) {
    const std::string id = i["id"];
    if (id.find("trainer_eval_") != std::string::npos) n += i["bytes"].get<std::int64_t>();
  }
  return n;
}

// Qwen2.5-7B LoRA, batch 1 x 2048 with checkpointing: the step is small, the evaluation at HF's
// default batch 8 holds 8 x 2048 x 152,064 x (2 + 4 + 4) B of logits and loss.
const std::string kSmallStep =
    "qwen2.5-7b --method lora --batch 1 --seq 2048 --gradient-checkpointing";

TEST(CliEval, OffByDefaultAndTheBatchAloneChangesNothing) {
  const auto off = estimate_json(kSmallStep);
  EXPECT_EQ(eval_line_bytes(off), 0);
  EXPECT_FALSE(off["plan"].contains("eval_strategy")) << "plans without evaluation print as before";
  const auto batch_only = estimate_json(kSmallStep + " --eval-batch 4");
  EXPECT_EQ(eval_line_bytes(batch_only), 0);
  EXPECT_EQ(batch_only["totals"]["peak_bytes"], off["totals"]["peak_bytes"]);
  EXPECT_EQ(batch_only["plan"]["eval_strategy"], "no");
  EXPECT_EQ(batch_only["plan"]["eval_batch"], 4);
}

TEST(CliEval, TheEvaluationSetsThePeakAndIsNamed) {
  const auto j = estimate_json(kSmallStep + " --eval-strategy steps --gpu a100-80gb");
  const std::int64_t tokens = 8 * 2048;
  // last hidden state (3,584 x 2 B) + logits 2 B + fp32 upcast 4 B + log_softmax 4 B per vocab.
  EXPECT_EQ(eval_line_bytes(j), tokens * 3584 * 2 + tokens * 152064 * 10);
  EXPECT_EQ(j["totals"]["peak_phase"], "steady state loaded");
  EXPECT_EQ(j["totals"]["peak_run_phase"], "the evaluation between steps (Trainer.evaluate)");
  EXPECT_EQ(j["plan"]["eval_strategy"], "steps");
  EXPECT_EQ(j["plan"]["eval_batch"], 8);
  const CliRun text =
      run_cli("estimate " + kSmallStep + " --eval-strategy epoch --per-device-eval-batch-size 2");
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_TRUE(contains(text, "at the peak: steady state loaded, the evaluation between steps"))
      << text.out;
  // At eval batch 1 the step's own peak is back above the evaluation.
  const auto one = estimate_json(kSmallStep + " --eval-strategy steps --eval-batch 1");
  EXPECT_EQ(eval_line_bytes(one), 2048 * 3584 * 2 + 2048 * std::int64_t{152064} * 10);
  EXPECT_FALSE(one["totals"].contains("peak_run_phase")) << one["totals"].dump();
}

TEST(CliEval, AdviseSuggestsASmallerEvalBatchAsAPasteableCommand) {
  const CliRun r = run_cli("advise " + kSmallStep + " --eval-strategy steps --gpu rtx-4090");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r, "evaluation micro-batch 1 (per_device_eval_batch_size=1)")) << r.out;
  EXPECT_TRUE(contains(r, "trainmem estimate " + kSmallStep +
                              " --eval-strategy steps --gpu rtx-4090 --eval-batch 1"))
      << r.out;
  // Without evaluation there is nothing to shrink.
  const CliRun plain = run_cli("advise " + kSmallStep + " --gpu rtx-4090");
  EXPECT_FALSE(contains(plain, "--eval-batch")) << plain.out;
}

TEST(CliEval, TrlConfigWithEvaluation) {
  const auto p = estimate_json("qwen2.5-1.5b --from " + import_data("trl_sft_eval.yaml"))["plan"];
  EXPECT_EQ(p["eval_strategy"], "steps");
  EXPECT_EQ(p["eval_batch"], 4);
  EXPECT_EQ(p["batch"], 2);
}

TEST(CliEval, OlderTrainingArgumentsEvaluationStrategyKeepsTheDefaultBatch) {
  const auto p =
      estimate_json("qwen3-0.6b --from " + import_data("training_args_eval.json"))["plan"];
  EXPECT_EQ(p["eval_strategy"], "epoch");
  EXPECT_EQ(p["eval_batch"], 8) << "per_device_eval_batch_size defaults to 8";
}

TEST(CliEval, AxolotlEvaluatesAtTheMicroBatchWithAValidationSplit) {
  const auto j = estimate_json("llama-3.1-8b --from " + import_data("axolotl_lora_eval.yaml"));
  EXPECT_EQ(j["plan"]["eval_strategy"], "steps");
  EXPECT_EQ(j["plan"]["eval_batch"], 2) << "axolotl: eval_batch_size defaults to micro_batch_size";
  EXPECT_GT(eval_line_bytes(j), 0);
  // val_set_size: 0 (the QLoRA example) evaluates nothing, whatever evals_per_epoch says.
  const auto none = estimate_json("llama-3.1-8b --from " + import_data("axolotl_qlora.yaml"));
  EXPECT_FALSE(none["plan"].contains("eval_strategy"));
  EXPECT_EQ(eval_line_bytes(none), 0);
}

TEST(CliEval, LlamaFactoryEvalSection) {
  const auto j = estimate_json("qwen3-4b --from " + import_data("llama_factory_eval.yaml"));
  EXPECT_EQ(j["plan"]["eval_strategy"], "steps");
  EXPECT_EQ(j["plan"]["eval_batch"], 1);
  EXPECT_NE(j["notes"].dump().find("val_size (a validation split"), std::string::npos);
}

TEST(CliEval, BadValuesAreOneLineErrors) {
  const CliRun word = run_cli("estimate qwen3-0.6b --eval-strategy step");
  EXPECT_NE(word.code, 0);
  EXPECT_TRUE(contains(word, "did you mean steps?")) << word.out;
  const CliRun zero = run_cli("estimate qwen3-0.6b --eval-batch 0");
  EXPECT_NE(zero.code, 0);
  EXPECT_TRUE(contains(zero, "--eval-batch: must be between 1 and")) << zero.out;
  const CliRun lit = run_cli("estimate qwen3-0.6b --framework litgpt --eval-strategy steps");
  EXPECT_NE(lit.code, 0);
  EXPECT_TRUE(contains(lit, "--eval-strategy: the litgpt profile does not run")) << lit.out;
}

}  // namespace

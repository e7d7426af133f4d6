// Advice a user can paste, solve's stated headroom and context cap, and --version.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::CliRun;
using trainmem::testing_support::contains;
using trainmem::testing_support::run_cli;

// An option's command, run as printed (minus the program name), prices that option.
void expect_prices_the_option(const nlohmann::json& option) {
  const std::string command = option["command"];
  const CliRun again = run_cli(command.substr(std::string("trainmem ").size()) + " --json");
  ASSERT_EQ(again.code, 0) << command << "\n" << again.out;
  EXPECT_EQ(nlohmann::json::parse(again.out)["fit"]["peak_bytes"], option["peak_bytes"]) << command;
}

TEST(CliAdvice, EveryOptionIsACompleteCommandThatRuns) {
  const CliRun r =
      run_cli("advise qwen3-4b --optimizer-impl foreach --seq 128 --gpu rtx-4090 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["options"].empty());
  bool fused_optimizer = false, liger = false;
  for (const auto& o : j["options"]) {
    const std::string command = o["command"];
    EXPECT_EQ(command.rfind("trainmem estimate qwen3-4b ", 0), 0u) << command;
    // The typed --optimizer-impl foreach stays unless the option sets the implementation.
    const bool sets_impl = std::string(o["flags"]).find("--optimizer-impl") != std::string::npos;
    EXPECT_EQ(command.find("--optimizer-impl foreach") != std::string::npos, !sets_impl) << command;
    EXPECT_EQ(command.find("--json"), std::string::npos) << command;
    fused_optimizer = fused_optimizer || o["flags"] == "--optimizer-impl fused";
    liger = liger || std::string(o["change"]).find("use_liger_kernel=True") != std::string::npos;
  }
  EXPECT_TRUE(fused_optimizer) << r.out;
  // Where the logits matter (long sequences), the fused loss is offered with the HF switch.
  const CliRun long_seq = run_cli("advise qwen3-4b --batch 4 --seq 2048 --gpu rtx-4090 --json");
  ASSERT_EQ(long_seq.code, 0) << long_seq.out;
  const auto long_json = nlohmann::json::parse(long_seq.out);
  for (const auto& o : long_json["options"]) {
    liger = liger || std::string(o["change"]).find("use_liger_kernel=True") != std::string::npos;
  }
  EXPECT_TRUE(liger) << long_seq.out;
  expect_prices_the_option(j["options"][0]);
}

// A typed HF switch (--bf16, --gradient_checkpointing) and an option's own flag for the same
// setting would disagree, which the command line refuses: the option's command leaves the switch
// out, and every option's command runs and prices what the option says.
TEST(CliAdvice, OptionCommandsDropTheSwitchesTheyOverride) {
  const CliRun r =
      run_cli("advise qwen3-8b --bf16 --gradient_checkpointing --seq 4096 --gpu rtx-4090 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  bool dropped_bf16 = false;
  for (const auto& o : j["options"]) {
    const std::string command = o["command"];
    const bool sets_precision = std::string(o["flags"]).find("--precision") != std::string::npos;
    EXPECT_EQ(command.find("--bf16") == std::string::npos, sets_precision) << command;
    dropped_bf16 = dropped_bf16 || sets_precision;
    expect_prices_the_option(o);
  }
  EXPECT_TRUE(dropped_bf16) << r.out;
}

// A typed flag with a value that an option changes is left out with its value: the command
// names each setting once, and reads as the plan it prices.
TEST(CliAdvice, OptionCommandsNameEachSettingOnce) {
  const CliRun r = run_cli(
      "advise llama-3.1-8b --method lora --batch 8 --seq 4096 --gpu "
      "rtx-4090 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  bool changed_batch = false;
  for (const auto& o : j["options"]) {
    const std::string command = o["command"];
    for (const char* flag : {"--batch ", "--seq ", "--method "}) {
      const std::size_t first = command.find(flag);
      EXPECT_EQ(command.find(flag, first + 1), std::string::npos) << flag << " twice: " << command;
    }
    if (std::string(o["flags"]).find("--batch ") != std::string::npos) {
      changed_batch = true;
      EXPECT_EQ(command.find("--batch 8"), std::string::npos) << command;
    }
    expect_prices_the_option(o);
  }
  EXPECT_TRUE(changed_batch) << r.out;
}

TEST(CliAdvice, AnEmptyListSaysWhy) {
  const CliRun r = run_cli(
      "advise deepseek-v3 --method qlora --checkpointing full --loss fused --optimizer "
      "paged-adamw-8bit --seq 128 --gpu rtx-4090 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  if (j["options"].empty()) {
    ASSERT_TRUE(j.contains("why_no_options")) << r.out;
    EXPECT_NE(std::string(j["why_no_options"]).find("multi-GPU"), std::string::npos);
  }
}

TEST(CliSolve, MaxSeqIsAMultipleOf64CappedAtTheContextWithStatedHeadroom) {
  const CliRun r = run_cli("solve qwen3-0.6b --method lora --gpu h100-sxm --for max-seq --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["step"], 64);
  EXPECT_EQ(j["answer"].get<std::int64_t>() % 64, 0);
  EXPECT_LE(j["answer"].get<std::int64_t>(), 40960);  // Qwen3's max_position_embeddings
  EXPECT_NE(j["notes"].dump().find("headroom"), std::string::npos) << r.out;
  const CliRun capped = run_cli("solve gpt2 --gpu h100-sxm --for max-seq");
  EXPECT_TRUE(contains(capped, "capped at the model's context")) << capped.out;
  EXPECT_TRUE(contains(capped, ": 1024 ")) << capped.out;
}

TEST(CliVersion, PrintsTheLibraryVersion) {
  const CliRun r = run_cli("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r, "trainmem 0.")) << r.out;
}

}  // namespace

namespace {

TEST(CliDevices, NvidiaSmiNamesAreAccepted) {
  const trainmem::testing_support::CliRun r =
      trainmem::testing_support::run_cli("estimate qwen3-0.6b --gpu 'NVIDIA GeForce RTX 4090'");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(trainmem::testing_support::contains(r, "(rtx-4090)")) << r.out;
}

}  // namespace

namespace {

TEST(CliModels, InstructIdsResolveToTheirArchitecturesPreset) {
  const trainmem::testing_support::CliRun r =
      trainmem::testing_support::run_cli("estimate Qwen/Qwen2.5-7B-Instruct --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"]["name"], "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(j["model"]["source_detail"], "qwen2.5-7b");
  EXPECT_NE(j["notes"].dump().find("priced with the preset qwen2.5-7b"), std::string::npos);
  EXPECT_EQ(trainmem::testing_support::run_cli("estimate Qwen/Qwen2.5-7B-Turbo").code, 1);
  // Dated releases (Qwen's -Instruct-2507, -Thinking-2507), which every current LLaMA-Factory
  // example names, and Llama 3's ids (the 3.1 tensor shapes) resolve too.
  for (const auto& [id, preset] : {std::pair{"Qwen/Qwen3-4B-Instruct-2507", "qwen3-4b"},
                                   std::pair{"Qwen/Qwen3-30B-A3B-Thinking-2507", "qwen3-30b-a3b"},
                                   std::pair{"meta-llama/Meta-Llama-3-8B-Instruct", "llama-3.1-8b"},
                                   std::pair{"NousResearch/Meta-Llama-3-8B", "llama-3.1-8b"}}) {
    const auto run = trainmem::testing_support::run_cli(std::string("estimate ") + id + " --json");
    ASSERT_EQ(run.code, 0) << id << run.out;
    EXPECT_EQ(nlohmann::json::parse(run.out)["model"]["source_detail"], preset) << id;
  }
  // unsloth's -bnb-4bit uploads are the preset saved 4-bit: QLoRA on it is priced, and LoRA is
  // refused naming the flags, as a config.json with that quantization_config is.
  const auto bnb = trainmem::testing_support::run_cli(
      "estimate unsloth/Llama-3.2-3B-Instruct-bnb-4bit --method qlora --json");
  ASSERT_EQ(bnb.code, 0) << bnb.out;
  EXPECT_EQ(nlohmann::json::parse(bnb.out)["model"]["source_detail"], "llama-3.2-3b");
  const auto lora = trainmem::testing_support::run_cli(
      "estimate unsloth/Llama-3.2-3B-Instruct-bnb-4bit --method lora");
  EXPECT_EQ(lora.code, 1);
  EXPECT_NE(lora.out.find("--method qlora --quant nf4"), std::string::npos) << lora.out;
}

}  // namespace

// The command line end to end: exit codes, error lines, JSON documents, and the four ways in.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using CliRun = trainmem::testing_support::CliRun;
CliRun run(const std::string& args) {
  return trainmem::testing_support::run_cli(args);
}

nlohmann::json run_json(const std::string& args) {
  const CliRun r = run(args + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

std::filesystem::path write_config(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("trainmem_cli_" + name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << text;
  return dir;
}

TEST(Cli, DefaultExampleDoesNotFitA32GBCard) {
  const CliRun r = run("estimate Qwen/Qwen2.5-1.5B --batch 4 --seq 1024 --memory 32GB");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Does not fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GiB"), std::string::npos);
}

// sweep's table gives the same verdict as its --json, solve and estimate: the device total on a
// CUDA card, not the live peak against usable memory.
TEST(Cli, SweepTableJudgesTheFigureItsJsonJudges) {
  const std::string args =
      "sweep llama-3.1-8b --method qlora --gpu rtx-4090 --gradient-checkpointing --values 6,7,8";
  const nlohmann::json j = run_json(args);
  const CliRun r = run(args);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("device total"), std::string::npos) << r.out;
  for (const auto& point : j.at("points")) {
    const std::string verdict = point.at("fits").get<bool>() ? "yes" : "no";
    const std::string batch = std::to_string(point.at("batch").get<int>());
    bool found = false;
    std::size_t start = 0;
    while (start < r.out.size()) {
      const std::size_t end = r.out.find('\n', start);
      const std::string line = r.out.substr(start, end - start);
      start = end == std::string::npos ? r.out.size() : end + 1;
      const std::size_t first = line.find_first_not_of(' ');
      if (first == std::string::npos || line.compare(first, batch.size() + 1, batch + " "))
        continue;
      found = true;
      EXPECT_EQ(line.substr(line.size() - verdict.size()), verdict) << line;
    }
    EXPECT_TRUE(found) << batch << "\n" << r.out;
  }
}

TEST(Cli, FailIfOverExitsThree) {
  EXPECT_EQ(run("estimate qwen3-8b --memory 24GB --fail-if-over").code, 3);
  EXPECT_EQ(run("estimate gpt2 --memory 80GB --fail-if-over").code, 0);
  // Without a device the gate could never fail: a usage error, not a silent pass.
  EXPECT_EQ(run("estimate gpt2 --fail-if-over").code, 2);
}

// The plan line names a QLoRA base's storage: 8-bit LoRA (load_in_8bit) is priced as qlora int8,
// and the header said only "qlora".
TEST(Cli, PlanLineNamesTheQuantisedBasesStorage) {
  EXPECT_NE(run("estimate qwen3-0.6b --method qlora --quant int8").out.find("qlora int8 r=16 ·"),
            std::string::npos);
  EXPECT_NE(run("estimate qwen3-0.6b --method qlora").out.find("qlora nf4 r=16 ·"),
            std::string::npos);
}

// A step above 1 can skip every size that fits: the answer stays "nothing" (exit 3), and the
// report names the size below the step that does fit.
TEST(Cli, SolveNamesWhatFitsBelowTheStep) {
  const auto r = run(
      "solve qwen3-8b --method lora --for max-batch --step 4 --memory 24GB --checkpointing full");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("Below the step: 2 fits"), std::string::npos) << r.out;
}

// A seed tier is judged on the peak: its report says so, and the replay runs with no card's
// limit (it reported the allocator running out beside "Fits").
TEST(Cli, ATierIsJudgedAsTheSeedsJudgeIt) {
  const auto r = run("estimate qwen3-8b --method lora --gpu tier-32gb");
  EXPECT_NE(r.out.find("Fits:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("runs out"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("The tier's verdict is the seeds'"), std::string::npos) << r.out;
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run("").code, 2);
  EXPECT_EQ(run("estimate").code, 2);  // MODEL missing
  EXPECT_EQ(run("estimate qwen3-8b --no-such-flag").code, 2);
  const CliRun bad_enum = run("estimate qwen3-8b --method sideways");
  EXPECT_EQ(bad_enum.code, 2);
  EXPECT_NE(bad_enum.out.find("--method"), std::string::npos) << bad_enum.out;
}

TEST(Cli, BadValuesExitOneNamingTheFlag) {
  const CliRun negative = run("estimate qwen3-8b --batch -4");
  EXPECT_EQ(negative.code, 1);
  EXPECT_NE(negative.out.find("--batch"), std::string::npos) << negative.out;
  const CliRun zero = run("estimate qwen3-8b --seq 0");
  EXPECT_EQ(zero.code, 1);
  EXPECT_NE(zero.out.find("--seq"), std::string::npos);
  const CliRun memory = run("estimate qwen3-8b --memory 32XB");
  EXPECT_EQ(memory.code, 1);
  EXPECT_NE(memory.out.find("--memory"), std::string::npos);
  // The library names plan fields (lora.rank, device); the command line shows its flags.
  const CliRun rank = run("estimate qwen3-8b --method lora --lora-rank 0");
  EXPECT_EQ(rank.code, 1);
  EXPECT_NE(rank.out.find("--lora-rank"), std::string::npos) << rank.out;
  const CliRun gpu = run("estimate qwen3-8b --gpu rtx-9999");
  EXPECT_EQ(gpu.code, 1);
  EXPECT_NE(gpu.out.find("--gpu"), std::string::npos) << gpu.out;
}

TEST(Cli, UnknownModelSuggestsPresets) {
  const CliRun r = run("estimate qwen3-7b");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("did you mean"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line";
}

TEST(Cli, BadConfigNamesFileAndField) {
  const auto dir =
      // Every size-setting key is present (a missing one is its own error); the layer count is 0.
      write_config("zero_layers", R"({"model_type": "qwen3", "num_hidden_layers": 0,
        "vocab_size": 151936, "hidden_size": 1024, "num_attention_heads": 16,
        "intermediate_size": 3072})");
  const CliRun r = run("estimate " + (dir / "config.json").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("config.json: num_hidden_layers:"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

TEST(Cli, EstimateJsonHasTheDocumentedKeys) {
  const auto j = run_json("estimate Qwen/Qwen2.5-1.5B --memory 24GiB");
  EXPECT_EQ(j["schema"], "trainmem.ledger/1");
  EXPECT_EQ(j["model"]["params_total"], 1543714304);
  EXPECT_EQ(j["model"]["source"], "preset");
  for (const char* k : {"static_bytes", "activation_bytes", "peak_bytes", "peak_phase"}) {
    EXPECT_TRUE(j["totals"].contains(k)) << k;
  }
  std::int64_t sum = 0;
  for (const auto& item : j["items"]) sum += item["bytes"].get<std::int64_t>();
  std::int64_t by_tenant = 0;
  for (const auto& [tenant, bytes] : j["totals"]["by_tenant"].items()) {
    by_tenant += bytes.get<std::int64_t>();
  }
  EXPECT_EQ(sum, by_tenant);
  EXPECT_EQ(j["fit"]["capacity_bytes"], std::int64_t{24} << 30);
}

TEST(Cli, ConfigFileAndFolderAreSources) {
  const auto dir = write_config("qwen3", R"({"model_type": "qwen3", "vocab_size": 151936,
    "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
    "tie_word_embeddings": true})");
  const auto file = run_json("estimate " + (dir / "config.json").string());
  EXPECT_EQ(file["model"]["source"], "config.json");
  EXPECT_EQ(file["model"]["params_total"], 596049920);  // Qwen3-0.6B's exact count
  const auto folder = run_json("estimate " + dir.string());
  EXPECT_EQ(folder["model"]["params_total"], 596049920);
  std::filesystem::remove_all(dir);
}

TEST(Cli, UnitsChangeOnlyThePrinting) {
  const CliRun gb = run("estimate gpt2 --units gb");
  EXPECT_NE(gb.out.find(" GB"), std::string::npos);
  EXPECT_EQ(run("estimate gpt2 --units parsecs").code, 2);
}

TEST(Cli, ExplainShowsFormulas) {
  const CliRun r = run("explain Qwen/Qwen2.5-1.5B --params 1.54e9 --convention textbook");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("1,540,000,000 params x 2 B"), std::string::npos) << r.out;
}

TEST(Cli, ModelsListsEveryPresetWithCounts) {
  const auto j = run_json("models");
  EXPECT_EQ(j["schema"], "trainmem.models/1");
  ASSERT_GE(j["models"].size(), 15u);
  for (const auto& m : j["models"]) EXPECT_GT(m["params_total"].get<std::int64_t>(), 0);
}

// main() registers only the plan and layout flags the command line names
// (register_only_named_flags, tools/cli/flags.h). Every spelling of a flag still reaches it,
// flags of every section still apply together, and a flag never registered is still refused.
TEST(Cli, FlagsAreFoundWhateverTheSpellingAndSection) {
  const nlohmann::json plain = run_json("estimate qwen3-8b --seq 4096 --batch 2");
  EXPECT_EQ(run_json("estimate qwen3-8b --seq=4096 --per_device_train_batch_size=2"), plain);
  EXPECT_EQ(run_json("estimate qwen3-8b --max_length 4096 --micro-batch-size 2"), plain);
  const nlohmann::json many = run_json(
      "estimate qwen3-8b --seq 4096 --batch 2 --method lora --lora-r 32 --eval-strategy steps "
      "--keep-outputs --gpus 2 --zero 2");
  EXPECT_NE(many, plain);
  EXPECT_EQ(run_json("estimate qwen3-8b --zero=2 --keep-outputs --lora_r 32 --gpus=2 --batch 2 "
                     "--eval_strategy steps --max-length 4096 --method=lora"),
            many);
  const CliRun bad = run("estimate qwen3-8b --bacth 2");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--bacth"), std::string::npos) << bad.out;
  const CliRun value = run("estimate qwen3-8b --method lorra");
  EXPECT_EQ(value.code, 2) << value.out;
  EXPECT_NE(value.out.find("lora"), std::string::npos) << value.out;
}

// --use-cache prices the output's KV cache (HF use_cache) where transformers' models run,
// --no-use-cache turns off the cache the Trainer before transformers 5 builds, and a framework
// with its own model code refuses it with the setting's name.
TEST(Cli, UseCacheSwitchesTheOutputsKvCache) {
  const auto has_cache = [](const nlohmann::json& j) {
    for (const auto& item : j["items"]) {
      if (item["id"] == "activations.kv_cache") return true;
    }
    return false;
  };
  const std::string base = "estimate qwen3-0.6b --seq 512 --padding-mask";
  EXPECT_FALSE(has_cache(run_json(base)));
  EXPECT_TRUE(has_cache(run_json(base + " --use-cache")));
  EXPECT_TRUE(has_cache(run_json(base + " --framework hf@4.57")));
  EXPECT_FALSE(has_cache(run_json(base + " --framework hf@4.57 --no-use-cache")));
  EXPECT_FALSE(has_cache(run_json(base + " --use-cache --checkpointing full")));
  const CliRun lit = run("estimate qwen3-0.6b --framework litgpt --use-cache");
  EXPECT_EQ(lit.code, 2) << lit.out;
  EXPECT_NE(lit.out.find("--use-cache"), std::string::npos) << lit.out;
  EXPECT_NE(lit.out.find("litgpt"), std::string::npos) << lit.out;
}

}  // namespace

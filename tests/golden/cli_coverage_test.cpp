// Issue 11 item 6 through the command line: the new presets and cards in `models` and `gpus`,
// checkpoint ids that resolve to a preset, and a user device file (--devices, TRAINMEM_DEVICES).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::CliRun;
using trainmem::testing_support::contains;
using trainmem::testing_support::run_cli;

std::string write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("trainmem_cov_" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(CliCoverage, NewPresetsAreListedWithTheirExactCounts) {
  const CliRun r = run_cli("models --json");
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, std::int64_t> total;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  for (const auto& m : doc["models"])
    total[m["id"].get<std::string>()] = m["params_total"].get<std::int64_t>();
  // Hand counts in tests/unit/inventory_test.cpp.
  EXPECT_EQ(total["llama-3.2-1b"], 1'235'814'400);
  EXPECT_EQ(total["qwen2.5-0.5b"], 494'032'768);
  EXPECT_EQ(total["qwen2.5-72b"], 72'706'203'648);
  EXPECT_EQ(total["qwen3-32b"], 32'762'123'264);
  EXPECT_EQ(total["gemma-3-27b"], 27'009'346'304);
  EXPECT_EQ(total["phi-4"], 14'659'507'200);
  EXPECT_EQ(total["mistral-nemo-base-2407"], 12'247'782'400);
  EXPECT_EQ(total["smollm2-135m"], 134'515'008);
  // 27 presets before issue 11, 18 added (every preset's count is checked in inventory_test).
  EXPECT_GE(total.size(), 45U);
}

TEST(CliCoverage, CheckpointIdsResolveToTheirPreset) {
  const CliRun it = run_cli("estimate google/gemma-3-4b-it --gpu l4");
  EXPECT_EQ(it.code, 0) << it.out;
  EXPECT_TRUE(contains(it, "google/gemma-3-4b-it is priced with the preset gemma-3-4b")) << it.out;
  EXPECT_TRUE(contains(it, "3,880,263,168 params")) << it.out;
  // The multimodal wrapper's vision tower is named, not silently left out.
  EXPECT_TRUE(contains(it, "Only the language model is priced: the config's vision_config"))
      << it.out;
  const CliRun nemo = run_cli("estimate mistralai/Mistral-Nemo-Instruct-2407 --method qlora");
  EXPECT_EQ(nemo.code, 0) << nemo.out;
  EXPECT_TRUE(contains(nemo, "priced with the preset mistral-nemo-base-2407")) << nemo.out;
  const CliRun smol = run_cli("estimate HuggingFaceTB/SmolLM2-1.7B-Instruct --json");
  ASSERT_EQ(smol.code, 0) << smol.out;
  EXPECT_TRUE(contains(smol, "smollm2-1.7b")) << smol.out;
}

// Re-uploads of gated models under another owner, as axolotl and Unsloth configs name them,
// price as the preset of the same repository name and say so; the renamed Llama 3.1 id too.
TEST(CliCoverage, ReuploadsUnderAnotherOwnerResolveToTheirPreset) {
  const CliRun nous = run_cli("estimate NousResearch/Meta-Llama-3.1-8B --json");
  ASSERT_EQ(nous.code, 0) << nous.out;
  EXPECT_TRUE(contains(nous, "priced with the preset llama-3.1-8b")) << nous.out;
  EXPECT_TRUE(contains(nous, "the same repository name under another owner")) << nous.out;
  const CliRun preset = run_cli("estimate llama-3.1-8b --json");
  const auto peak = [](const CliRun& r) {
    return nlohmann::json::parse(r.out)["totals"]["peak_bytes"].get<std::int64_t>();
  };
  EXPECT_EQ(peak(nous), peak(preset));
  const CliRun unsloth = run_cli("estimate unsloth/Llama-3.2-1B-Instruct");
  EXPECT_EQ(unsloth.code, 0) << unsloth.out;
  EXPECT_TRUE(contains(unsloth, "priced with the preset llama-3.2-1b")) << unsloth.out;
  // A repository name no preset has is still an error with suggestions.
  const CliRun unknown = run_cli("estimate someone/not-a-model");
  EXPECT_NE(unknown.code, 0);
  EXPECT_TRUE(contains(unknown, "did you mean")) << unknown.out;
}

TEST(CliCoverage, NewCardsAreListedAndResolveByTheirNvidiaSmiNames) {
  const CliRun list = run_cli("gpus --kind gpu");
  ASSERT_EQ(list.code, 0) << list.out;
  for (const char* id : {"a10g", "l4", "rtx-4060-ti-16gb", "rtx-3080", "rtx-3090", "p100-16gb",
                         "mi300x", "mi300x-vf"}) {
    EXPECT_TRUE(contains(list, id)) << id;
  }
  const CliRun a10g = run_cli("estimate qwen2.5-0.5b --gpu 'NVIDIA A10G'");
  EXPECT_EQ(a10g.code, 0) << a10g.out;
  EXPECT_TRUE(contains(a10g, "NVIDIA A10G (a10g)")) << a10g.out;
  // P100: compute capability 6.0, so no FlashAttention-2 and no native bf16.
  const CliRun p100 =
      run_cli("estimate qwen2.5-0.5b --gpu 'Tesla P100-PCIE-16GB' --attention flash");
  EXPECT_EQ(p100.code, 0) << p100.out;
  EXPECT_TRUE(contains(p100, "FlashAttention-2 does not run on Tesla P100-PCIE-16GB")) << p100.out;
  // MI300X's "gfx942" is no CUDA compute capability: no such note there.
  const CliRun mi = run_cli("estimate qwen2.5-0.5b --gpu mi300x --attention flash");
  EXPECT_EQ(mi.code, 0) << mi.out;
  EXPECT_FALSE(contains(mi, "FlashAttention-2 does not run")) << mi.out;
  // One nvidia-smi name for two memory sizes: an error that names the ids, exit 1.
  const CliRun shared = run_cli("estimate qwen2.5-0.5b --gpu 'NVIDIA GeForce RTX 4060 Ti'");
  EXPECT_EQ(shared.code, 1) << shared.out;
  EXPECT_TRUE(contains(shared, "rtx-4060-ti-16gb (16 GB)")) << shared.out;
}

TEST(CliCoverage, DevicesFileAddsAndOverridesRows) {
  const std::string file = write_file("devices.json", R"({"devices": [
    {"id": "lab-card", "name": "Lab Card X", "total_mib": 12000, "compute_capability": "8.6"},
    {"id": "rtx-4090", "name": "NVIDIA GeForce RTX 4090", "total_mib": 20000,
     "compute_capability": "8.9", "note": "our 4090s run a display"}]})");
  const CliRun gpus = run_cli("gpus --json --devices " + file);
  ASSERT_EQ(gpus.code, 0) << gpus.out;
  std::map<std::string, nlohmann::json> by_id;
  const nlohmann::json doc = nlohmann::json::parse(gpus.out);
  for (const auto& d : doc["devices"]) by_id[d["id"].get<std::string>()] = d;
  ASSERT_TRUE(by_id.count("lab-card")) << gpus.out;
  EXPECT_EQ(by_id["lab-card"]["capacity_bytes"], 12000LL << 20);
  EXPECT_EQ(by_id["rtx-4090"]["capacity_bytes"], 20000LL << 20);
  EXPECT_EQ(by_id.count("a10g"), 1U);  // the built-ins stay

  const CliRun est = run_cli("estimate qwen2.5-0.5b --gpu 'Lab Card X' --devices " + file);
  EXPECT_EQ(est.code, 0) << est.out;
  EXPECT_TRUE(contains(est, "Lab Card X (lab-card)")) << est.out;
  const CliRun over = run_cli("estimate qwen2.5-0.5b --json --gpu rtx-4090 --devices " + file);
  ASSERT_EQ(over.code, 0) << over.out;
  EXPECT_TRUE(contains(over, "20971520000")) << "20000 MiB in bytes:\n" << over.out;
  // solve --for smallest-gpu considers the user's cards: a 6000 MiB one is below every built-in.
  const std::string tiny = write_file(
      "tiny.json",
      R"({"devices": [{"id": "tiny-card", "total_mib": 6000, "compute_capability": "8.6"}]})");
  const CliRun solve = run_cli("solve smollm2-135m --for smallest-gpu --json --devices " + tiny);
  ASSERT_EQ(solve.code, 0) << solve.out;
  EXPECT_EQ(nlohmann::json::parse(solve.out)["answer"], "tiny-card") << solve.out;
  const CliRun advise = run_cli("advise qwen2.5-0.5b --gpu lab-card --devices " + file);
  EXPECT_EQ(advise.code, 0) << advise.out;

  // The environment variable does the same, and the flag wins over it.
  setenv("TRAINMEM_DEVICES", file.c_str(), 1);
  const CliRun env = run_cli("estimate qwen2.5-0.5b --gpu lab-card");
  const std::string bad = write_file("bad_env.json", R"({"devices": [{"id": "x"}]})");
  setenv("TRAINMEM_DEVICES", bad.c_str(), 1);
  const CliRun env_bad = run_cli("gpus");
  const CliRun flag_wins = run_cli("gpus --devices " + file);
  unsetenv("TRAINMEM_DEVICES");
  EXPECT_EQ(env.code, 0) << env.out;
  EXPECT_TRUE(contains(env, "Lab Card X (lab-card)")) << env.out;
  EXPECT_EQ(env_bad.code, 1) << env_bad.out;
  EXPECT_TRUE(contains(env_bad, "devices[0].total_mib: is missing")) << env_bad.out;
  EXPECT_TRUE(contains(env_bad, "(the file TRAINMEM_DEVICES names)")) << env_bad.out;
  EXPECT_EQ(flag_wins.code, 0) << flag_wins.out;
  // Without the file the user's card is unknown again.
  EXPECT_EQ(run_cli("estimate qwen2.5-0.5b --gpu lab-card").code, 1);
}

TEST(CliCoverage, BadDevicesFileIsOneLineNamingFileRowAndField) {
  const std::string file = write_file("bad.json", R"({"devices": [
    {"id": "ok", "total_mib": 8192},
    {"id": "typo", "total_MiB": 8192}]})");
  const CliRun r = run_cli("estimate qwen2.5-0.5b --gpu ok --devices " + file);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "trainmem: error: " + file +
                       ": devices[1].total_MiB: is not a device field; did you mean total_mib?; "
                       "fields: id, name, kind, total_mib, total_gb, reserve_mib, reserve_gb, "
                       "gpu_share, bf16, aliases, compute_capability, note\n");
  const CliRun missing = run_cli("gpus --devices /nonexistent/devices.json");
  EXPECT_EQ(missing.code, 1) << missing.out;
  EXPECT_TRUE(contains(missing, "/nonexistent/devices.json: --devices: no such file"))
      << missing.out;
}

}  // namespace

// `trainmem validate` on multi-rank rows (validation/distributed.py): a row's config.layout is
// priced with that layout (the most-loaded rank), and validation/data/distributed.jsonl, measured
// with DDP, FSDP1 and FSDP2 on 2 and 4 CPU ranks, is held to the issue's bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::run_cli;

const std::string kSource = TRAINMEM_SOURCE_DIR;

// One row on the tiny Qwen3 config at b2 s128, with `layout` (a JSON object text, or "").
std::string write_row(const std::string& name, const std::string& layout) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("trainmem_" + name + ".jsonl")).string();
  std::ofstream out(path);
  out << R"({"schema":"trainmem.measurement/1","id":")" << name << R"(","config":{"model":")"
      << kSource
      << R"(/validation/configs/qwen3-tiny.json","method":"full","optimizer":"adamw",)"
         R"("optimizer_impl":"foreach","precision":"bf16","checkpointing":"none",)"
         R"("attention":"sdpa","batch":2,"seq":128)"
      << (layout.empty() ? "" : R"(,"layout":)" + layout)
      << R"(},"measured":{"peak_bytes":50000000,"peak_phase":"backward","peak_step":2}})"
      << "\n";
  return path;
}

std::int64_t predicted(const std::string& file) {
  const auto r = run_cli("validate " + file + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out)["per_row"][0]["predicted_peak_bytes"].get<std::int64_t>();
}

TEST(CliValidateLayout, RowLayoutIsPricedPerRank) {
  const std::int64_t one = predicted(write_row("one_device", ""));
  const std::int64_t ddp = predicted(write_row("ddp2", R"({"gpus":2,"engine":"ddp"})"));
  const std::int64_t fsdp =
      predicted(write_row("fsdp2", R"({"gpus":2,"fsdp":"full","fsdp_version":2})"));
  // DDP adds the gradient buckets: a second copy of the 2,884,992 bf16 gradients' bytes.
  EXPECT_EQ(ddp - one, 2'884'992 * 2);
  // FULL_SHARD keeps half the weights and states per rank: below one device.
  EXPECT_LT(fsdp, one);
}

TEST(CliValidateLayout, MeasuredDistributedRowsWithinThreePercentMedianEightWorst) {
  const std::string data = kSource + "/validation/data/distributed.jsonl";
  const auto r = run_cli("validate " + data + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  // 2 families x 5 engines x 2 and 4 ranks, LoRA and checkpointing rows: every engine is there.
  EXPECT_GE(j["rows"].get<int>(), 20);
  for (const char* engine :
       {"_ddp_", "_fsdp1-full_", "_fsdp1-grad-op_", "_fsdp2-full_", "_fsdp2-grad-op_"}) {
    int n = 0;
    for (const auto& row : j["per_row"])
      n += row["id"].get<std::string>().find(engine) != std::string::npos;
    EXPECT_GE(n, 4) << engine;
  }
  EXPECT_LE(j["median_abs_pct_error"].get<double>(), 3.0);
  EXPECT_LE(j["max_abs_pct_error"].get<double>(), 8.0);
}

}  // namespace

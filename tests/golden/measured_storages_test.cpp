// Rows MemTracker reads above the storages a step holds, re-measured by the dispatch tracker
// (validation/harness/dispatch_tracker.py: the storages alive). Counted by storage, every row is
// trainmem's figure within half a percent.
//  - validation/data/dora-crosscheck.jsonl (make measure-dora): the DoRA rows of dora.jsonl
//    without checkpointing; MemTracker read up to 1.8 MB above them (dora.jsonl: -3.5 %).
//  - validation/data/ckpt-dispatch.jsonl (make measure-families): LoRA + dropout + non-reentrant
//    checkpointing on every supported family; MemTracker read about 131 KB above them
//    (families.jsonl: -0.4 to -0.7 %).
//  - validation/data/holdout*.jsonl: configurations nobody chose (below).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::run_cli;

nlohmann::json validated(const std::string& file) {
  const auto r = run_cli("validate " + std::string(TRAINMEM_SOURCE_DIR) + "/validation/data/" +
                         file + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

TEST(MeasuredStorages, DoraRowsWithinHalfAPercent) {
  const auto j = validated("dora-crosscheck.jsonl");
  EXPECT_EQ(j["rows"].get<int>(), 13);
  EXPECT_LE(j["max_abs_pct_error"].get<double>(), 0.5);
}

TEST(MeasuredStorages, CheckpointedLoraDropoutRowsWithinHalfAPercent) {
  const auto j = validated("ckpt-dispatch.jsonl");
  EXPECT_EQ(j["rows"].get<int>(), 11);
  EXPECT_LE(j["max_abs_pct_error"].get<double>(), 0.5);
}

// Seeded random draws over the whole grid the harness runs (validation/matrix.py holdout,
// holdout_2 to holdout_5; make measure-holdout), and the micro-batches small enough that
// the lm_head's backward is the peak (head_backward), held to issue 15's targets for every family:
// median <= 1 %, worst <= 3 %.
TEST(MeasuredStorages, HeldOutDrawsMeetTheFamilyTargets) {
  for (const auto& [file, rows] : {std::pair{"holdout.jsonl", 40},
                                   {"holdout-2.jsonl", 60},
                                   {"holdout-3.jsonl", 60},
                                   {"holdout-4.jsonl", 60},
                                   {"holdout-5.jsonl", 60},
                                   {"head-backward.jsonl", 4}}) {
    const auto j = validated(file);
    EXPECT_EQ(j["rows"].get<int>(), rows) << file;
    EXPECT_LE(j["median_abs_pct_error"].get<double>(), 1.0) << file;
    EXPECT_LE(j["max_abs_pct_error"].get<double>(), 3.0) << file;
  }
}

}  // namespace

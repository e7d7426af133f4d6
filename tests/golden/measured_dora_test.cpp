// validation/data/dora-crosscheck.jsonl (make measure-dora): the DoRA rows of dora.jsonl without
// checkpointing, measured by the dispatch tracker (the storages a step holds). MemTracker read up
// to 1.8 MB above them on the tiny all-linear rows (dora.jsonl: -3.5 %); counted by storage, every
// row is trainmem's figure within half a percent: DoRA's saved tensors are priced as PEFT's dora.py
// holds them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::run_cli;

TEST(MeasuredDora, EveryStorageCountedRowWithinHalfAPercent) {
  const std::string data =
      std::string(TRAINMEM_SOURCE_DIR) + "/validation/data/dora-crosscheck.jsonl";
  const auto r = run_cli("validate " + data + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].get<int>(), 13);
  EXPECT_LE(j["max_abs_pct_error"].get<double>(), 0.5);
}

}  // namespace

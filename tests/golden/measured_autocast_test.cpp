// validation/data/autocast-lora.jsonl (make measure-autocast-lora): LoRA under autocast without
// checkpointing on five families, measured on CPU. Autocast's bf16 copy of a frozen weight is kept
// only where its matmul input requires grad; the rows hold that rule to the measured bytes (the
// parallel blocks read +0.8 to +1.0 % when every layer's copies were priced).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::run_cli;

TEST(MeasuredAutocastLora, EveryRowWithinHalfAPercent) {
  const std::string data =
      std::string(TRAINMEM_SOURCE_DIR) + "/validation/data/autocast-lora.jsonl";
  const auto r = run_cli("validate " + data + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].get<int>(), 7);
  EXPECT_LE(j["max_abs_pct_error"].get<double>(), 0.5);
}

}  // namespace

// The exact convention against the measured peaks in validation/data (CPU MemTracker runs,
// trainmem.measurement/1): median absolute error <= 3 %, worst <= 8 % (docs/accuracy.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace trainmem {
namespace {

TEST(MeasuredAccuracy, WithinThreePercentMedianEightWorst) {
  const std::string data = std::string(TRAINMEM_SOURCE_DIR) + "/validation/data";
  if (!std::filesystem::exists(data)) GTEST_SKIP() << "no measurements";
  for (const auto& entry : std::filesystem::directory_iterator(data)) {
    if (entry.path().extension() != ".jsonl") continue;
    // families*.jsonl (issue 15) holds rows of families this estimator refuses or does not yet
    // price term by term (dropout, soft-capping, CPU kernel choices); the branch that models
    // them holds those rows to the per-family bounds and removes this skip.
    if (entry.path().filename().string().rfind("families", 0) == 0) continue;
    const std::string cmd = std::string(TRAINMEM_CLI) + " validate " + entry.path().string() +
                            " --max-median-error 3 --max-error 8 > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << entry.path();
  }
}

}  // namespace
}  // namespace trainmem

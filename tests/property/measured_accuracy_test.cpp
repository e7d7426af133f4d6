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
    // GPU figures (published, and the harness's CUDA rows) are measured by the benchmark
    // (bench/gpu_accuracy.sh, docs/accuracy.md "GPU"), not held to the CPU trace bounds here.
    if (entry.path().filename().string().rfind("gpu-", 0) == 0) continue;
    // families*.jsonl (issue 15) are held to the bounds in every family, below.
    if (entry.path().filename().string().rfind("families", 0) == 0) continue;
    const std::string cmd = std::string(TRAINMEM_CLI) + " validate " + entry.path().string() +
                            " --max-median-error 3 --max-error 8 > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << entry.path();
  }
}

// Issue 15: every family's CPU-traced rows within median 1 % and worst 3 % (docs/accuracy.md).
TEST(MeasuredAccuracy, EveryFamilyWithinOnePercentMedianThreeWorst) {
  const std::string data = std::string(TRAINMEM_SOURCE_DIR) + "/validation/data";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data)) {
    if (entry.path().extension() != ".jsonl") continue;
    if (entry.path().filename().string().rfind("families", 0) != 0) continue;
    ++files;
    const std::string cmd = std::string(TRAINMEM_CLI) + " validate " + entry.path().string() +
                            " --max-family-median-error 1 --max-family-error 3 > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << entry.path();
  }
  if (files == 0) GTEST_SKIP() << "no family measurements";
}

// Issue 9's GPU targets (median <= 3 %, worst <= 10 %) for the event stream trainmem derives from
// its ledger, against the CUDA matrix's loops traced on CPU and replayed through the same
// allocator model (validation/data/gpu-traced.jsonl; docs/accuracy.md "The derived stream against
// the traced streams"): a regression in the stream's order or splits shows here without a GPU.
TEST(MeasuredAccuracy, DerivedStreamWithinTheGpuTargetsOfTheTracedStreams) {
  const std::string file = std::string(TRAINMEM_SOURCE_DIR) + "/validation/data/gpu-traced.jsonl";
  ASSERT_TRUE(std::filesystem::exists(file));
  const std::string cmd = std::string(TRAINMEM_CLI) + " validate " + file +
                          " --max-median-error 3 --max-error 10 > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace trainmem

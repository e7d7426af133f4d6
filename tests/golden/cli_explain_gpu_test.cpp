// `trainmem explain` on a CUDA device: the GPU section's figures, each with its arithmetic, agree
// with the JSON document's and add up.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::CliRun;
using trainmem::testing_support::run_cli;

// "6,922,698,752 bytes", as format_bytes writes Unit::bytes.
std::string bytes_text(std::int64_t b) {
  std::string digits = std::to_string(b);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out + " bytes";
}

const std::string kEnv = "env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF";

struct Both {
  std::string text;
  nlohmann::json gpu;
};

Both explain_and_json(const std::string& args) {
  const CliRun text = run_cli("explain " + args, kEnv);
  EXPECT_EQ(text.code, 0) << text.out;
  const CliRun json = run_cli("estimate " + args + " --json", kEnv);
  EXPECT_EQ(json.code, 0) << json.out;
  return {text.out, nlohmann::json::parse(json.out)["gpu"]};
}

TEST(ExplainGpu, EveryFigureOfTheGpuSectionWithItsSum) {
  const Both b = explain_and_json("qwen3-0.6b --method lora --gpu rtx-4090");
  const auto& g = b.gpu;
  const auto allocated = g["peak_allocated_bytes"].get<std::int64_t>();
  const auto reserved = g["peak_reserved_bytes"].get<std::int64_t>();
  const auto context = g["context_bytes"].get<std::int64_t>();
  const auto total = g["device_total_bytes"].get<std::int64_t>();
  EXPECT_NE(b.text.find("Peak allocated (torch.cuda.max_memory_allocated)"), std::string::npos);
  EXPECT_NE(b.text.find("(" + bytes_text(allocated) + ")"), std::string::npos) << b.text;
  EXPECT_NE(b.text.find("(" + bytes_text(reserved) + ")"), std::string::npos) << b.text;
  EXPECT_NE(b.text.find("(" + bytes_text(context) + ")"), std::string::npos) << b.text;
  EXPECT_NE(b.text.find("(" + bytes_text(total) + "): the figure the verdict compares"),
            std::string::npos)
      << b.text;
  // One GPU, no paged state: the device total is the peak phase's reserved plus the context,
  // and the sum is written out with that phase's reserved.
  const std::string phase = g["peak_phase"].get<std::string>();
  const auto at_peak = g["by_phase"][phase]["reserved_bytes"].get<std::int64_t>();
  EXPECT_EQ(total, at_peak + context);
  EXPECT_NE(b.text.find(fmt::format("= reserved {:.2f} GiB in {} + context {:.2f} GiB\n",
                                    static_cast<double>(at_peak) / (1 << 30), phase,
                                    static_cast<double>(context) / (1 << 30))),
            std::string::npos)
      << b.text;
  // The context's row is named, and the Ada figure is marked as estimated (its kernel growth
  // was measured on Hopper).
  EXPECT_NE(b.text.find("CUDA context (driver state and loaded kernels; not in reserved) "
                        "(estimated)"),
            std::string::npos)
      << b.text;
  EXPECT_NE(b.text.find("unsloth-zoo PR #1053"), std::string::npos) << b.text;
}

TEST(ExplainGpu, PagedStateIsInTheLedgerButOutsideThePool) {
  // A full fine-tune with paged AdamW: the ledger counts the states, allocated does not, and the
  // device total adds them back.
  const Both b = explain_and_json("qwen3-0.6b --optimizer paged_adamw --gpu h100");
  const auto outside = b.gpu["outside_pool_bytes"].get<std::int64_t>();
  ASSERT_GT(outside, std::int64_t{1} << 30);
  EXPECT_NE(b.text.find("(less the paged optimizer state"), std::string::npos) << b.text;
  EXPECT_NE(b.text.find("+ paged optimizer state"), std::string::npos) << b.text;
  // What is left between the ledger's in-pool bytes and allocated is rounding and workspaces,
  // a few MiB, not the states' GiB.
  EXPECT_NE(b.text.find(" MiB above the ledger's"), std::string::npos) << b.text;
}

TEST(ExplainGpu, ACardThatRunsOutSaysSoUnderTheSum) {
  // Llama-3.1-8B's full fine-tune cannot fit a 24 GB card: the replay under the card's limit runs
  // out, and the figures are the unlimited replay's.
  const Both b = explain_and_json("llama-3.1-8b --gpu rtx-4090");
  ASSERT_TRUE(b.gpu["oom"].get<bool>()) << b.gpu.dump();
  EXPECT_NE(b.text.find("the card runs out first, in " + b.gpu["oom_phase"].get<std::string>()),
            std::string::npos)
      << b.text;
  const Both fits = explain_and_json("qwen3-0.6b --method lora --gpu h100");
  ASSERT_FALSE(fits.gpu["oom"].get<bool>());
  EXPECT_EQ(fits.text.find("runs out"), std::string::npos) << fits.text;
}

TEST(ExplainGpu, AcrossGpusTheMostLoadedRankIsExplained) {
  const CliRun r = run_cli("explain llama-3.1-8b --gpus 4 --zero 3 --gpu h100", kEnv);
  ASSERT_EQ(r.code, 0) << r.out;
  // After every rank's lines and the host's, the most-loaded rank's GPU figures once.
  const auto at = r.out.find("most loaded ──\nOn the GPU: PyTorch's caching allocator");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Device total (nvidia-smi)", at), std::string::npos);
  EXPECT_EQ(r.out.find("On the GPU:", at + 1), r.out.rfind("On the GPU:"));
}

TEST(ExplainGpu, NoGpuSectionWhereThereIsNoCudaAllocator) {
  // Apple unified memory has no caching allocator or CUDA context.
  const CliRun apple = run_cli("explain qwen3-0.6b --method lora --gpu m2-max-32gb", kEnv);
  ASSERT_EQ(apple.code, 0) << apple.out;
  EXPECT_EQ(apple.out.find("On the GPU"), std::string::npos) << apple.out;
  // The textbook convention prices uniform rates, no tensors to replay.
  const CliRun textbook =
      run_cli("explain Qwen/Qwen2.5-1.5B --params 1.54e9 --convention textbook", kEnv);
  ASSERT_EQ(textbook.code, 0) << textbook.out;
  EXPECT_EQ(textbook.out.find("On the GPU"), std::string::npos) << textbook.out;
}

}  // namespace

// The allocator model against CUDA on the same allocation stream. Each committed trace
// (validation/data/alloc-traces/ROW.json: validation/alloc_stream.py, the loop of one
// configuration of the CUDA matrix on CPU with real tensors), replayed with sm90's two cuBLAS
// workspaces, gives the reserved memory that configuration measured on the H200
// (validation/data/gpu-measured.jsonl, gpu_phases) in every phase: the model of PyTorch's caching
// allocator is exact on the stream it is given, and what the GPU rows' reserved errors leave is
// the stream trainmem derives from its ledger (docs/accuracy.md, "The allocator model on a traced
// stream"). validation/data/gpu-traced.jsonl holds the replays as rows (validation/traced_rows.py);
// the second test keeps it equal to what the traces replay to.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/alloc_trace.h"
#include "gpu/caching_allocator.h"
#include "gpu/cuda_context.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kData = fs::path(TRAINMEM_SOURCE_DIR) / "validation/data";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The rows of a measurement file with this id: {"step1": {"forward": {"reserved": ...}}}.
json row_with_id(const fs::path& file, const std::string& id) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const json row = json::parse(line);
    if (row["id"] == id) return row;
  }
  return json();
}

struct Replayed {
  gpu::AllocTrace trace;
  gpu::ReplayResult result;
  std::string row;
};

// A trace replayed as trainmem_replay_trace does: sm90's workspaces, the given allocator
// configuration.
Replayed replay_trace(const fs::path& path, const std::string& alloc_conf) {
  const std::string text = slurp(path);
  auto trace = gpu::parse_alloc_trace(text, path.filename().string());
  EXPECT_TRUE(trace) << trace.error().message();
  if (!trace) return {};
  Replayed r{std::move(trace).value(), {}, json::parse(text)["row"].get<std::string>()};
  gpu::add_cublas_workspaces(r.trace, gpu::cublas_workspace("9.0").cublas_bytes);
  r.result = gpu::replay(r.trace.events, gpu::parse_alloc_conf(alloc_conf, "row").value(), {},
                         static_cast<int>(r.trace.phases.size()), false);
  return r;
}

// "s2:backward" -> {"step2", "backward"}; "s0:loaded" belongs to step 1, as on the GPU.
std::pair<std::string, std::string> step_and_phase(const std::string& p) {
  const std::string step = p[1] == '0' ? "step1" : "step" + p.substr(1, p.find(':') - 1);
  return {step, p.substr(p.find(':') + 1)};
}

// Where a configuration's CUDA run caches more than its traced stream explains, for reasons not
// identified (docs/accuracy.md, "The allocator model on a traced stream"): in these phases the
// replay is held to CUDA's figure less the gap, so a change in either shows.
struct KnownGap {
  std::string config;
  std::vector<std::string> phases;  // "step2/backward"
  std::int64_t gap_mib;             // CUDA's reserved minus the replay's
};
const std::vector<KnownGap> kKnownGaps = {
    // The LoRA run's second backward caches one more segment of the fp32 logits' size (2 x 512 x
    // 151,936 x 4 B = 594 MiB, rounded to 2 MiB: 596) than the loop's own allocations explain,
    // and keeps it to the end of the step.
    {"qwen3-0.6b_lora-r16_adamw-foreach_bf16_ckpt-none_sdpa_b2_s512",
     {"step2/backward", "step2/end_of_backward", "step2/optimizer_step"},
     598},
    // The checkpointed first step's forward and backward hold one more 20 MiB large-pool segment
    // (a CUDA-only transient of 1-10 MiB), released into the optimizer step's reuse.
    {"qwen3-0.6b_full_adamw-foreach_bf16_ckpt-full_sdpa_b2_s512",
     {"step1/forward", "step1/end_of_forward", "step1/backward", "step1/end_of_backward"},
     20},
};

std::int64_t known_gap(const std::string& config, const std::string& step_phase) {
  for (const KnownGap& g : kKnownGaps) {
    if (g.config != config) continue;
    for (const std::string& p : g.phases) {
      if (p == step_phase) return g.gap_mib * gpu::kMiB;
    }
  }
  return 0;
}

// Each traced row (gpu-traced.jsonl, whose figures the next test ties to its trace) against the
// row of the same id the H200 measured, phase by phase.
TEST(TracedReplay, ReproducesTheReservedMemoryCudaMeasured) {
  std::ifstream in(kData / "gpu-traced.jsonl");
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    const json traced = json::parse(line);
    const std::string id = traced["id"].get<std::string>();
    if (traced["measured"]["metric"] != "max_memory_reserved") continue;
    const json measured = row_with_id(kData / "gpu-measured.jsonl", id);
    if (measured.is_null()) continue;  // not measured on a GPU yet
    ++rows;
    const std::string config = id.substr(0, id.size() - std::string("_reserved").size());
    int compared = 0;
    for (const std::string step : {"step1", "step2"}) {
      for (const std::string phase : {"loaded", "forward", "end_of_forward", "backward",
                                      "end_of_backward", "optimizer_step"}) {
        const json& cuda = measured["measured"]["gpu_phases"][step];
        const json& replayed = traced["measured"]["gpu_phases"][step];
        if (!cuda.contains(phase) || !replayed.contains(phase)) continue;
        // Within two 2 MiB small-pool segments, less a known gap.
        const std::int64_t gap = known_gap(config, step + "/" + phase);
        EXPECT_NEAR(replayed[phase]["reserved"].get<double>(),
                    cuda[phase]["reserved"].get<double>() - static_cast<double>(gap),
                    4.0 * gpu::kMiB)
            << id << " " << step << " " << phase;
        ++compared;
      }
    }
    EXPECT_GE(compared, 6) << id;
  }
  EXPECT_GE(rows, 4);
}

TEST(TracedReplay, CommittedRowsAreTheTracesReplayed) {
  std::ifstream in(kData / "gpu-traced.jsonl");
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    const json row = json::parse(line);
    const json& m = row["measured"];
    const fs::path trace =
        fs::path(TRAINMEM_SOURCE_DIR) / row["provenance"]["trace"].get<std::string>();
    const Replayed r = replay_trace(trace, row["config"].value("alloc_conf", ""));
    const bool reserved = m["metric"] == "max_memory_reserved";
    EXPECT_EQ(m["peak_bytes"].get<std::int64_t>(),
              reserved ? r.result.peak_reserved_bytes : r.result.peak_allocated_bytes)
        << row["id"];
    for (std::size_t i = 0; i < r.trace.phases.size(); ++i) {
      const auto [step, phase] = step_and_phase(r.trace.phases[i]);
      const json& figures = m["gpu_phases"][step][phase];
      EXPECT_EQ(figures["reserved"].get<std::int64_t>(), r.result.phases[i].reserved_bytes)
          << row["id"] << " " << r.trace.phases[i];
      EXPECT_EQ(figures["allocated"].get<std::int64_t>(), r.result.phases[i].allocated_bytes)
          << row["id"] << " " << r.trace.phases[i];
    }
    ++rows;
  }
  EXPECT_GE(rows, 4);
}

}  // namespace
}  // namespace trainmem

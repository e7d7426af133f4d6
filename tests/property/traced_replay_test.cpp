// The allocator model against CUDA on the same allocation stream. Each committed trace
// (validation/data/alloc-trace-*.json: validation/alloc_stream.py, the loop of one configuration
// of the CUDA matrix on CPU with real tensors), replayed with sm90's two cuBLAS workspaces, gives
// the reserved memory that configuration measured on the H200 (validation/data/gpu-measured.jsonl,
// gpu_phases) in every phase: the model of PyTorch's caching allocator is exact on the stream it
// is given, and what the GPU rows' reserved errors leave is the stream trainmem derives from its
// ledger (docs/accuracy.md, "The allocator model on a traced stream").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "gpu/alloc_trace.h"
#include "gpu/caching_allocator.h"
#include "gpu/cuda_context.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// gpu_phases of the measured row with this id: {"step1": {"forward": {"reserved": ...}}}.
json measured_phases(const std::string& id) {
  std::ifstream in(fs::path(TRAINMEM_SOURCE_DIR) / "validation/data/gpu-measured.jsonl");
  for (std::string line; std::getline(in, line);) {
    const json row = json::parse(line);
    if (row["id"] == id) return row["measured"]["gpu_phases"];
  }
  return json();
}

TEST(TracedReplay, ReproducesTheReservedMemoryCudaMeasured) {
  const fs::path data = fs::path(TRAINMEM_SOURCE_DIR) / "validation/data";
  int traces = 0;
  for (const auto& entry : fs::directory_iterator(data)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("alloc-trace-") || entry.path().extension() != ".json") continue;
    ++traces;
    const std::string text = slurp(entry.path());
    auto trace = gpu::parse_alloc_trace(text, name);
    ASSERT_TRUE(trace) << trace.error().message();
    const json phases = measured_phases(json::parse(text)["row"].get<std::string>());
    ASSERT_TRUE(phases.is_object()) << name << ": no measured row";
    gpu::AllocTrace t = std::move(trace).value();
    gpu::add_cublas_workspaces(t, gpu::cublas_workspace("9.0").cublas_bytes);
    const gpu::ReplayResult r = gpu::replay(t.events, gpu::parse_alloc_conf("").value(), {},
                                            static_cast<int>(t.phases.size()), false);
    int compared = 0;
    for (std::size_t i = 0; i < t.phases.size(); ++i) {
      const std::string& p = t.phases[i];  // "s2:backward"
      const std::string step = p[1] == '0' ? "step1" : "step" + p.substr(1, p.find(':') - 1);
      const std::string phase = p.substr(p.find(':') + 1);
      if (!phases.contains(step) || !phases[step].contains(phase)) continue;
      const auto measured = phases[step][phase]["reserved"].get<std::int64_t>();
      // Within one 2 MiB small-pool segment.
      EXPECT_NEAR(static_cast<double>(r.phases[i].reserved_bytes), static_cast<double>(measured),
                  2.0 * gpu::kMiB)
          << name << " " << p;
      ++compared;
    }
    EXPECT_GE(compared, 10) << name;
  }
  EXPECT_GE(traces, 1);
}

}  // namespace
}  // namespace trainmem

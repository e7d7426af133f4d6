// Replays a traced allocation stream (validation/alloc_stream.py) through trainmem's model of
// PyTorch's CUDA caching allocator and prints, per phase, the high-water of allocated and
// reserved memory: what torch.cuda.max_memory_allocated / max_memory_reserved would read between
// the harness's phase marks. The trace is taken on CPU, which has no cuBLAS: the forward and the
// backward thread's workspace (sm90's by default, cublas_workspace("9.0")) are added where their
// first GEMM runs. `--json` prints the same figures in bytes, for validation/traced_rows.py.
//
//   trainmem_replay_trace TRACE.json [--cublas-workspace-mib N] [--alloc-conf CONF] [--json]
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpu/alloc_trace.h"
#include "gpu/caching_allocator.h"
#include "gpu/cuda_context.h"
#include "io/read_file.h"

using namespace trainmem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: trainmem_replay_trace TRACE.json [--cublas-workspace-mib N] "
                 "[--alloc-conf CONF] [--json]\n";
    return 2;
  }
  const std::string file = argv[1];
  std::int64_t workspace_mib = gpu::cublas_workspace("9.0").cublas_bytes / gpu::kMiB;
  std::string conf;
  bool json = false;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--json") {
      json = true;
      --i;  // takes no value
      continue;
    }
    if (i + 1 == argc) {
      std::cerr << flag << " needs a value\n";
      return 2;
    }
    if (flag == "--cublas-workspace-mib") {
      const std::string_view v = argv[i + 1];
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), workspace_mib);
      if (ec != std::errc() || end != v.data() + v.size() || workspace_mib < 0 ||
          workspace_mib > 4096) {
        std::cerr << "--cublas-workspace-mib: '" << v << "' is not a size in MiB (0-4096)\n";
        return 2;
      }
    } else if (flag == "--alloc-conf") {
      conf = argv[i + 1];
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  auto text = io::read_regular_file(file, std::int64_t{1} << 30, "an allocation trace");
  if (!text) {
    std::cerr << text.error().message() << "\n";
    return 1;
  }
  auto trace = gpu::parse_alloc_trace(text.value(), file);
  if (!trace) {
    std::cerr << trace.error().message() << "\n";
    return 1;
  }
  auto config = gpu::parse_alloc_conf(conf, "--alloc-conf");
  if (!config) {
    std::cerr << config.error().message() << "\n";
    return 1;
  }
  if (workspace_mib > 0) gpu::add_cublas_workspaces(trace.value(), workspace_mib * gpu::kMiB);
  const auto& phases = trace->phases;
  const gpu::ReplayResult r =
      gpu::replay(trace->events, config.value(), {}, static_cast<int>(phases.size()), false);
  if (json) {
    nlohmann::json doc = {{"peak_allocated_bytes", r.peak_allocated_bytes},
                          {"peak_reserved_bytes", r.peak_reserved_bytes},
                          {"segments_allocated", r.segments_allocated},
                          {"phases", nlohmann::json::array()}};
    for (std::size_t i = 0; i < phases.size() && i < r.phases.size(); ++i) {
      doc["phases"].push_back({{"phase", phases[i]},
                               {"allocated_bytes", r.phases[i].allocated_bytes},
                               {"reserved_bytes", r.phases[i].reserved_bytes},
                               {"largest_free_bytes", r.phases[i].largest_free_bytes}});
    }
    std::cout << doc.dump() << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<32}{:>16}{:>16}{:>20}\n", "phase", "allocated MiB", "reserved MiB",
                           "largest free MiB");
  for (std::size_t i = 0; i < phases.size() && i < r.phases.size(); ++i) {
    std::cout << fmt::format("{:<32}{:>16.1f}{:>16.1f}{:>20.1f}\n", phases[i],
                             static_cast<double>(r.phases[i].allocated_bytes) / gpu::kMiB,
                             static_cast<double>(r.phases[i].reserved_bytes) / gpu::kMiB,
                             static_cast<double>(r.phases[i].largest_free_bytes) / gpu::kMiB);
  }
  std::cout << fmt::format("peak allocated {:.1f} MiB, peak reserved {:.1f} MiB, {} segments\n",
                           static_cast<double>(r.peak_allocated_bytes) / gpu::kMiB,
                           static_cast<double>(r.peak_reserved_bytes) / gpu::kMiB,
                           r.segments_allocated);
  return 0;
}

// libFuzzer target for allocation traces (gpu/alloc_trace.h, the trainmem.alloc-trace/1 files
// validation/alloc_stream.py writes): either a one-line error, or a trace whose replay keeps
// PyTorch's order of figures (allocated <= reserved, both non-negative).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpu/alloc_trace.h"
#include "gpu/caching_allocator.h"
#include "gpu/cuda_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainmem::gpu;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto trace = parse_alloc_trace(text, "trace.json");
  if (!trace.ok()) {
    if (trace.error().reason.empty() || trace.error().message().size() > 600) __builtin_trap();
    return 0;
  }
  AllocTrace t = std::move(trace).value();
  add_cublas_workspaces(t, cublas_workspace("9.0").cublas_bytes);
  const auto config = parse_alloc_conf("");
  if (!config.ok()) __builtin_trap();
  const ReplayResult r =
      replay(t.events, config.value(), {}, static_cast<int>(t.phases.size()), false);
  if (r.peak_allocated_bytes < 0 || r.peak_reserved_bytes < r.peak_allocated_bytes) {
    __builtin_trap();
  }
  for (const PhaseStats& p : r.phases) {
    if (p.allocated_bytes < 0 || p.reserved_bytes < p.allocated_bytes) __builtin_trap();
  }
  return 0;
}

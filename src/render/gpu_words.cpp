#include "render/gpu_words.h"

#include <fmt/format.h>

#include "gpu/caching_allocator.h"

namespace trainmem {

std::string segment_words(const GpuEstimate& g) {
  // Every size here is a whole number of MiB (large_segment_size_mb is given in MiB).
  const auto mib = [](std::int64_t bytes) { return fmt::format("{} MiB", bytes >> 20); };
  if (g.expandable_segments) {
    return fmt::format("pages of {} and {} mapped into one segment per pool",
                       mib(gpu::kSmallBuffer), mib(g.large_segment_bytes));
  }
  return fmt::format("{}, {}, or the request rounded to {}", mib(gpu::kSmallBuffer),
                     mib(g.large_segment_bytes), mib(gpu::kRoundLarge));
}

std::int64_t outside_pool_at(const GpuEstimate& g, std::int64_t device_total_bytes,
                             std::int64_t reserved_bytes) {
  return device_total_bytes - reserved_bytes - g.context_bytes - g.nccl_bytes;
}

}  // namespace trainmem

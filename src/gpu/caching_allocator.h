// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, the native
// backend), replaying an ordered stream of allocations and frees. It reproduces what
// torch.cuda.memory_allocated / memory_reserved report: requests rounded to 512 B, a small pool
// (<= 1 MiB, carved from 2 MiB segments) and a large pool (< 10 MiB from 20 MiB segments, larger
// rounded to 2 MiB), best fit with splitting, the oversize rules of max_split_size_mb, no reuse
// across streams, garbage_collection_threshold, expandable_segments, and the free-and-retry on a
// failed device allocation. docs/gpu.md explains each rule and its source line.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/alloc_event.h"
#include "trainmem/errors.h"

namespace trainmem::gpu {

// CUDACachingAllocator.cpp constants.
inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;
inline constexpr std::int64_t kMinBlockSize = 512;         // every request rounds up to 512 B
inline constexpr std::int64_t kSmallSize = 1 * kMiB;       // largest small-pool request
inline constexpr std::int64_t kSmallBuffer = 2 * kMiB;     // small-pool segment
inline constexpr std::int64_t kMinLargeAlloc = 10 * kMiB;  // below: a 20 MiB segment is cut
inline constexpr std::int64_t kLargeBuffer = 20 * kMiB;    // default large_segment_size_mb
inline constexpr std::int64_t kRoundLarge = 2 * kMiB;      // larger requests round to 2 MiB
// roundup_power2_divisions: one setting per power-of-two interval from 1 MiB up
// (c10/core/AllocatorConfig.h kRoundUpPowerOfTwoIntervals, kRoundUpPowerOfTwoStart).
inline constexpr int kRoundUpPowerOfTwoIntervals = 16;
inline constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

// PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF, as far as it changes memory.
struct AllocatorConfig {
  std::int64_t max_split_size_bytes = kUnlimited;  // max_split_size_mb (unset: unlimited)
  // large_segment_size_mb: the segment a 1-10 MiB request cuts, and the page expandable segments
  // map in the large pool (c10/core/AllocatorConfig.h large_segment_size_, 20 MiB by default).
  std::int64_t large_segment_size_bytes = kLargeBuffer;
  // max_non_split_rounding_mb: how much larger than an oversize request a cached oversize block
  // may be and still serve it whole (default: large_segment_size).
  std::int64_t max_non_split_rounding_bytes = kLargeBuffer;
  double garbage_collection_threshold = 0.0;  // 0: off; else in (0, 1)
  bool expandable_segments = false;
  // roundup_power2_divisions per interval [1 MiB x 2^i, 1 MiB x 2^(i+1)); 0 or 1: plain 512 B.
  std::vector<std::int64_t> roundup_power2_divisions =
      std::vector<std::int64_t>(kRoundUpPowerOfTwoIntervals, 0);
  bool any_roundup_divisions = false;  // some interval has divisions > 1
  bool async_backend = false;          // backend:cudaMallocAsync (not modelled: reported as a note)
  double per_process_memory_fraction = 0.0;  // 0: not set (then GC never runs)
  std::string text;                          // the string parsed, for reports
};

// Parses "expandable_segments:True,max_split_size_mb:512" (keys of c10/core/AllocatorConfig.cpp
// and c10/cuda/CUDAAllocatorConfig.cpp). Empty string: defaults. An unknown key or a bad value is
// an Error naming `field` (the flag or variable) and the key.
Result<AllocatorConfig> parse_alloc_conf(std::string_view text,
                                         std::string_view field = "PYTORCH_CUDA_ALLOC_CONF");

// round_size: the block size a request of `bytes` gets (512 B, or the power-of-two division).
std::int64_t round_size(std::int64_t bytes, const AllocatorConfig& config);
// get_allocation_size: the segment a rounded request of `size` would cudaMalloc.
std::int64_t allocation_size(std::int64_t size, const AllocatorConfig& config);

struct ReplayLimits {
  // What cudaMalloc can obtain for this process (device capacity less the CUDA context and any
  // memory outside PyTorch); kUnlimited: never fails.
  std::int64_t device_bytes = kUnlimited;
  // torch.cuda.set_per_process_memory_fraction x capacity; 0: not set. Only with a fraction set
  // does garbage_collection_threshold act (the allocator's set_fraction test).
  std::int64_t allowed_bytes = 0;
};

struct PhaseStats {
  bool seen = false;                    // the stream had events in this phase
  std::int64_t allocated_bytes = 0;     // high-water of memory_allocated within the phase
  std::int64_t reserved_bytes = 0;      // high-water of memory_reserved within the phase
  std::int64_t requested_bytes = 0;     // high-water of bytes requested (before rounding)
  std::int64_t largest_free_bytes = 0;  // largest cached free block at the end of the phase
  std::int64_t end_allocated_bytes = 0;
  std::int64_t end_reserved_bytes = 0;
  std::int64_t peak_allocated_bytes = 0;  // max_memory_allocated up to the end of the phase
  std::int64_t peak_reserved_bytes = 0;   // max_memory_reserved up to the end of the phase
};

struct ReplayResult {
  std::vector<PhaseStats> phases;  // indexed by AllocEvent::phase
  std::int64_t peak_allocated_bytes = 0;
  std::int64_t peak_reserved_bytes = 0;
  std::int64_t peak_requested_bytes = 0;
  std::int64_t segments_allocated = 0;  // cudaMalloc calls (or page maps when expandable)
  std::int64_t segments_released = 0;   // cudaFree calls (or unmaps)
  std::int64_t alloc_retries = 0;       // cache flushes after a failed cudaMalloc
  bool oom = false;                     // an allocation failed after freeing the cache
  std::int64_t oom_event = -1;          // index of the failing event
  std::int64_t oom_request_bytes = 0;   // its rounded size
  int oom_phase = -1;
};

// Replays `events` in order; their phases must not decrease. Frees must name a live id. Phases
// without events (up to `phase_count`) report what they inherit. `fast`: counted allocations
// that the cache cannot serve are laid out in bulk (same result; false replays one by one).
// Pure.
ReplayResult replay(const std::vector<AllocEvent>& events, const AllocatorConfig& config,
                    const ReplayLimits& limits = {}, int phase_count = 0, bool fast = true);

}  // namespace trainmem::gpu

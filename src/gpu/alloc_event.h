// One allocation or free as the CUDA caching allocator sees it: what the event stream
// (alloc_events.h) produces and the allocator model (caching_allocator.h) replays. Plain data.
#pragma once

#include <cstdint>

namespace trainmem::gpu {

enum class Op : std::uint8_t { alloc, free };

// 24 bytes (a stream holds one per allocation and free, ~5,000 for a dense 8B model): the narrow
// fields first, so that `bytes` needs no padding before it.
struct AllocEvent {
  Op op = Op::alloc;
  std::int16_t stream = 0;  // CUDA stream: blocks are never reused across streams
  std::int16_t phase = 0;   // phase slot of the step (ledger.h), for per-phase statistics
  std::int16_t label = -1;  // index into the stream's labels (a few dozen), -1 when none
  std::int32_t id = 0;      // the tensor (or run of tensors); a free names the id of its alloc
  std::int32_t count = 1;   // tensors of `bytes` each, allocated one after another (alloc only)
  std::int64_t bytes = 0;   // bytes requested per tensor (before the allocator's rounding)
};
static_assert(sizeof(AllocEvent) == 24);

}  // namespace trainmem::gpu

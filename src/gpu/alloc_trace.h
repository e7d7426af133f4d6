// A traced allocation stream: the allocations and frees of a real training loop, in the order
// PyTorch issued them, recorded by validation/alloc_stream.py (CPU, real tensors). Replaying it
// through the caching-allocator model (caching_allocator.h) separates the allocator model's error
// from the event stream's (alloc_events.h): docs/accuracy.md, "The allocator model on a traced
// stream".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/alloc_event.h"
#include "trainmem/errors.h"

namespace trainmem::gpu {

struct AllocTrace {
  std::vector<std::string> phases;  // phase names by AllocEvent::phase ("s1:forward", ...)
  std::vector<AllocEvent> events;   // allocations and frees, one tensor each, in order
};

// The trainmem.alloc-trace/1 document: {"phases": [names], "events": [["a", id, bytes, phase],
// ["f", id, 0, phase], ...]}. An error names the file and the event: an unknown phase, a free
// of an id not allocated, an id allocated twice, a negative size.
Result<AllocTrace> parse_alloc_trace(std::string_view text, const std::string& file);

// Allocations the trace cannot see, added before the first event of a phase.
void add_allocation_at(AllocTrace& trace, std::string_view phase, std::int64_t bytes);
// A CPU trace has no cuBLAS: one workspace per handle (`bytes`, cublas_workspace() of the device)
// added where the first GEMM of the forward thread ("s1:forward") and of the backward thread
// ("s1:backward") runs, as alloc_stream.py names the phases.
void add_cublas_workspaces(AllocTrace& trace, std::int64_t bytes);

}  // namespace trainmem::gpu

// Words the GPU section of the report and its explanation share, built from the caching
// allocator's constants (gpu/caching_allocator.h), so both say what the replay does.
#pragma once

#include <cstdint>
#include <string>

#include "trainmem/estimate.h"

namespace trainmem {

// The segments of the replayed configuration: "2 MiB, 20 MiB, or the request rounded to 2 MiB",
// or, with expandable segments, "pages of 2 MiB and 20 MiB mapped into one segment per pool".
std::string segment_words(const GpuEstimate& g);

// The paged optimizer state resident in a phase whose device total and reserved are given: the
// rest of the device total once the context and NCCL's buffers are taken out (gpu_estimate()).
std::int64_t outside_pool_at(const GpuEstimate& g, std::int64_t device_total_bytes,
                             std::int64_t reserved_bytes);

}  // namespace trainmem

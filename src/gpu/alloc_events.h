// One training step as the CUDA caching allocator sees it: the ledger's items turned into an
// ordered stream of allocations and frees with exact byte sizes, in the order PyTorch issues
// them, over two steps (the first, which creates the optimizer state lazily, and a steady one).
// Aggregate ledger lines are split into the tensors that really are allocated: weights, master
// copies, gradients and optimizer states per parameter tensor, saved activations per layer and
// per saved tensor (the activation model's terms). Every other line is one allocation, made when
// its phase mask first turns on and freed when it turns off. docs/gpu.md gives the order and its
// sources.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpu/alloc_event.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem::gpu {

struct EventStream {
  std::vector<AllocEvent> events;    // phase = the ledger's phase slot (0..kPhaseSlots-1)
  std::vector<std::string> labels;   // indexed by AllocEvent::label
  std::vector<Tenant> label_tenant;  // the tenant of each label
  // Bytes the ledger counts that never pass through PyTorch's allocator (paged optimizer state
  // in CUDA unified memory), live from this slot on.
  std::int64_t outside_pool_bytes = 0;
  int outside_pool_from_slot = 0;
  // Ledger items split into per-tensor events (the rest are one allocation each).
  int items_split = 0;
};

struct StreamOptions {
  // Lines live at the end of the steady step stay allocated; with `close_steady_step` those that
  // end with the step are freed there: the ones the first step frees at its own end (live in its
  // last phase but not in the steady step's first), such as gradients that
  // zero_grad(set_to_none) drops (run_events.h chains such steps).
  bool close_steady_step = false;
  // The device's cuBLAS workspace per handle (gpu::cublas_workspace); 0: the ledger's line, which
  // prices sm90's. Either way the line is one workspace per handle.
  std::int64_t cublas_workspace_bytes = 0;
};

// The stream for `ledger` (which must be estimate(model, plan)).
EventStream alloc_events(const LoadedModel& model, const TrainingPlan& plan, const Ledger& ledger,
                         const StreamOptions& options = {});

// Requested bytes live after each event, summed per slot at its high-water: a check that the
// stream reproduces the ledger's per-phase live bytes. `phase_count` phases (a run's, run_events.h;
// the two-step stream's kPhaseSlots).
std::vector<std::int64_t> requested_high_water(std::span<const AllocEvent> events, int phase_count);
std::vector<std::int64_t> requested_high_water(const EventStream& stream);

}  // namespace trainmem::gpu

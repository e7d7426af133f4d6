// A run of training steps whose batches have different padded lengths, as one allocation event
// stream. The caching allocator keeps the blocks of every size it has seen, so a run of
// variable-length batches reserves more than one step at the longest length: a longer batch
// cannot reuse the smaller cached blocks, and a shorter one splits larger blocks, leaving
// fragments. Replaying the steps in their order reproduces that (docs/gpu.md, "Variable-length
// batches").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "gpu/alloc_event.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem::gpu {

// The most events a run holds (24 B each: 96 MiB), and the most tensors it allocates (an event
// of count n allocates n, one by one in the replay, about 0.2 us each): a model with many tensors
// per step (a large MoE, ~6,000 events and tens of thousands of tensors per step) is replayed over
// fewer steps rather than for seconds.
inline constexpr std::size_t kMaxRunEvents = 4'000'000;
inline constexpr std::int64_t kMaxRunTensors = 10'000'000;

struct RunStream {
  std::vector<AllocEvent> events;
  int phase_count = 0;  // steps x kPhaseCount
  int steps = 0;
};

// The steps at `lengths` (each step's padded sequence length, in order; `plan.seq` is ignored),
// one step per length: the first as alloc_events builds its first step (which creates the
// optimizer state), every later one as a steady step at its own length, with its own phases
// (i x kPhaseCount + phase for the i-th, from 0). What one step hands to the next (the gradients a
// late zero_grad frees, the logits a loop keeps until the next forward) is freed by the next step
// as alloc_events frees the first step's. Empty `lengths`, or steps whose hand-over does not line
// up (a framework whose steps differ in structure): nullopt. The run stops before the step that
// would pass kMaxRunEvents, kMaxRunTensors or the 16-bit phase numbers (`steps` says how many
// were chained).
// `cublas_workspace_bytes`: as StreamOptions (alloc_events.h).
std::optional<RunStream> run_events(const LoadedModel& model, const TrainingPlan& plan,
                                    std::span<const std::int64_t> lengths,
                                    std::int64_t cublas_workspace_bytes = 0);

// The slot of the two-step layout (0 .. kPhaseSlots - 1) that a phase of a run stream stands for:
// the first step's, or the steady step's for every later step.
int run_phase_slot(int phase);

}  // namespace trainmem::gpu

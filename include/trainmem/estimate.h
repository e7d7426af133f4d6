// The estimate: estimate(model, plan) -> Ledger, every byte as a line with its formula and
// source; and gpu_estimate(), the same step replayed through PyTorch's caching allocator plus the
// CUDA context (peak allocated, peak reserved, device total).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// The ledger: every byte the plan costs, as lines a reader can check. Totals are only ever sums of
// lines; the peak is the maximum over the phases of a step of the lines live in that phase.

enum class Tenant {
  weights,
  gradients,
  optimizer_states,
  master_weights,
  activations,
  logits,
  temporaries,
  overhead,
};
inline constexpr int kTenantCount = 8;
std::string_view tenant_name(Tenant t);   // snake_case, as in JSON
std::string_view tenant_title(Tenant t);  // "Optimizer states", as in the report

// Phases of one optimizer step, in order. backward_start is the first moment of backward (the
// loss's gradients exist, no parameter gradient does yet); backward is late in backward (every
// gradient allocated, the first layer's activations still held).
enum class Phase {
  loaded,
  forward,
  end_of_forward,
  backward_start,
  backward,
  end_of_backward,
  optimizer_step
};
inline constexpr int kPhaseCount = 7;
// Each phase is seen twice: in the first step (state created lazily) and in the steady state.
inline constexpr int kPhaseSlots = 2 * kPhaseCount;

// A bit set over phase slots: bit (step_index * kPhaseCount + phase), step_index 0 = first step.
using PhaseMask = std::uint32_t;
constexpr PhaseMask phase_bit(int step_index, Phase p) {
  return PhaseMask{1} << (step_index * kPhaseCount + static_cast<int>(p));
}
inline constexpr PhaseMask kAllPhases = (PhaseMask{1} << kPhaseSlots) - 1;
// Slot -> "step 1 backward" / "steady backward".
std::string slot_name(int slot);

struct LedgerItem {
  // A stable key for scripts and tests: "<tenant>.<what>" ("logits.fp32_upcast",
  // "weights.frozen.bf16"); the label is for people and may change wording.
  std::string id;
  Tenant tenant = Tenant::weights;
  std::string label;  // "Weights, bf16 (trainable)"
  std::int64_t bytes = 0;
  std::string formula;          // the arithmetic with its numbers: "1,543,714,304 params x 2 B"
  std::string source;           // where the rule comes from: a paper, or a framework source file
  PhaseMask live = kAllPhases;  // phases in which these bytes are allocated
  bool estimated = false;       // true when modelled rather than counted
};

// What the report says about the model.
struct ModelSummary {
  std::string name;
  std::string source;         // "preset", "config.json", "safetensors headers", "hf cache"
  std::string source_detail;  // the path or preset id used
  std::string model_type;
  std::int64_t params_total = 0;
  std::int64_t params_trainable = 0;
  std::int64_t params_with_adapters = 0;  // base plus adapter tensors, as PEFT's "all params"
  std::int64_t params_active = 0;
  std::int64_t params_mtp = 0;        // reported separately, not priced
  std::int64_t params_published = 0;  // from the model card, 0 when unknown
  std::int64_t params_priced = 0;     // the count the textbook rates were applied to
};

struct Ledger {
  ModelSummary model;
  TrainingPlan plan;
  std::vector<LedgerItem> items;
  std::vector<std::string> notes;  // assumptions and reminders shown under the report
};

struct Totals {
  std::int64_t static_bytes = 0;      // weights + gradients + optimizer states + master weights
  std::int64_t activation_bytes = 0;  // activations + logits at their peak phase
  std::int64_t peak_bytes = 0;        // max over phase slots of live bytes
  int peak_slot = 0;                  // the slot where the peak falls
  std::array<std::int64_t, kTenantCount> by_tenant{};  // sum of items per tenant
  std::array<std::int64_t, kPhaseSlots> by_slot{};     // live bytes per phase slot
  // A figure did not fit 64 bits (saturated at 2^63 - 1): the plan needs more than 8 EiB and
  // never fits. check_plan_size() (limits.h) refuses such plans up front; this is the second
  // guard.
  bool overflow = false;
};

Totals totals(const Ledger& ledger);

// Each tenant's live bytes in one phase slot (the peak's, for the stacked bar).
std::array<std::int64_t, kTenantCount> live_at_slot(const Ledger& ledger, int slot);

// estimate(): the pure function at the centre. Model + plan in, ledger out. The plan must have
// passed validate(); nothing here fails.

Ledger estimate(const LoadedModel& model, const TrainingPlan& plan);

// The plan's peak, as estimate() and totals() compute it.
std::int64_t peak_of(const LoadedModel& model, const TrainingPlan& plan);

// What the GPU really holds: the ledger's step replayed through a model of PyTorch's CUDA caching
// allocator, plus the CUDA context. Three figures, as PyTorch and the driver report them:
//   peak allocated  torch.cuda.max_memory_allocated: live tensor blocks (requests rounded up)
//   peak reserved   torch.cuda.max_memory_reserved: the allocator's segments, cached free
//                   blocks included
//   device total    nvidia-smi: reserved + CUDA context + memory outside the allocator
// docs/gpu.md explains each figure and the allocator rules behind it.

struct GpuOptions {
  std::string alloc_conf;  // PYTORCH_CUDA_ALLOC_CONF (flag --alloc-conf or environment)
  std::string alloc_conf_field = "PYTORCH_CUDA_ALLOC_CONF";  // named in errors
  std::string compute_capability;  // of the device; empty: unknown (a note names the assumption)
  int cuda_major = 12;             // CUDA runtime of the torch build
  int cuda_minor = 8;
  bool lazy_loading = true;  // CUDA_MODULE_LOADING=LAZY (torch's default)
  // What the process may hold in all (nvidia-smi view); 0: unlimited. The allocator's cudaMalloc
  // fails beyond this less the context, and then frees its cache and retries.
  std::int64_t usable_bytes = 0;
  // The padded sequence length of each step of a run, in order (a dataset's shuffled
  // micro-batches, DatasetFit::step_lengths), each at most the plan's seq; empty: every step at
  // the plan's seq.
  // The steps are replayed through one allocator (src/gpu/run_events.h): the cache that
  // variable-length batches leave is part of the reserved figure.
  std::vector<std::int64_t> step_lengths;
};

struct GpuPhase {
  std::int64_t allocated_bytes = 0;     // high-water of memory_allocated in the phase
  std::int64_t reserved_bytes = 0;      // high-water of memory_reserved in the phase
  std::int64_t device_total_bytes = 0;  // reserved + context + outside the allocator
  std::int64_t largest_free_bytes = 0;  // largest cached free block at the end of the phase
};

struct GpuEstimate {
  bool available = false;  // false for the textbook convention (no event stream)
  std::array<GpuPhase, kPhaseSlots> phases{};
  std::int64_t peak_allocated_bytes = 0;  // torch.cuda.max_memory_allocated
  std::int64_t peak_reserved_bytes = 0;   // torch.cuda.max_memory_reserved
  std::int64_t device_total_bytes = 0;    // nvidia-smi, at the peak of reserved
  int peak_slot = 0;                      // slot of the device total's peak
  // Reserved where the device total peaks (the run's when the dataset's run sets it): the rest
  // of the total is the context, NCCL's buffers and the paged optimizer state resident then.
  std::int64_t total_reserved_bytes = 0;
  std::string peak_run_phase;  // run_phase_at(ledger, peak_slot): "" when a step phase
  // Where max_memory_allocated is first reached, and its run phase when beyond the step.
  int peak_allocated_slot = 0;
  std::string peak_allocated_run_phase;
  std::int64_t context_bytes = 0;  // CUDA context (outside the allocator)
  bool context_estimated = true;
  std::string context_source;
  std::int64_t outside_pool_bytes = 0;  // paged optimizer state (CUDA unified memory)
  std::int64_t nccl_bytes = 0;          // NCCL buffers: 0 on one GPU (distributed layouts: later)
  std::int64_t cublas_workspace_bytes = 0;  // per handle on this device (inside allocated)
  std::int64_t events = 0;                  // allocations and frees replayed
  std::string alloc_conf;                   // as parsed
  bool expandable_segments = false;
  // large_segment_size_mb: the segment of a 1-10 MiB request, the large pool's expandable page.
  std::int64_t large_segment_bytes = std::int64_t{20} << 20;
  // The allocator ran out at `oom_slot` even after freeing its cache (figures then come from an
  // unlimited replay, i.e. what the step would need).
  bool oom = false;
  int oom_slot = -1;
  std::int64_t oom_request_bytes = 0;
  // The run of GpuOptions::step_lengths (run_steps 0: none): its peaks over every step. The
  // device total above is the larger of the run's and the single step's.
  int run_steps = 0;
  std::int64_t run_peak_allocated_bytes = 0;
  std::int64_t run_peak_reserved_bytes = 0;
  std::int64_t run_device_total_bytes = 0;
  int run_peak_allocated_slot = 0;  // where the run's allocated and device total peak (a
  int run_peak_slot = 0;            // step's slot: first step or steady state)
  std::vector<std::string> notes;
};

// Replays `ledger` (= estimate(model, plan)). Errors: a malformed alloc_conf, naming the key.
Result<GpuEstimate> gpu_estimate(const LoadedModel& model, const TrainingPlan& plan,
                                 const Ledger& ledger, const GpuOptions& options);

}  // namespace trainmem

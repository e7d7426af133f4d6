// What the GPU really holds: the ledger's step replayed through a model of PyTorch's CUDA caching
// allocator, plus the CUDA context. Three figures, as PyTorch and the driver report them:
//   peak allocated  torch.cuda.max_memory_allocated: live tensor blocks (requests rounded up)
//   peak reserved   torch.cuda.max_memory_reserved: the allocator's segments, cached free
//                   blocks included
//   device total    nvidia-smi: reserved + CUDA context + memory outside the allocator
// docs/gpu.md explains each figure and the allocator rules behind it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/errors.h"
#include "trainmem/ledger.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem {

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
  std::string peak_run_phase;             // run_phase_at(ledger, peak_slot): "" when a step phase
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
  // The allocator ran out at `oom_slot` even after freeing its cache (figures then come from an
  // unlimited replay, i.e. what the step would need).
  bool oom = false;
  int oom_slot = -1;
  std::int64_t oom_request_bytes = 0;
  std::vector<std::string> notes;
};

// Replays `ledger` (= estimate(model, plan)). Errors: a malformed alloc_conf, naming the key.
Result<GpuEstimate> gpu_estimate(const LoadedModel& model, const TrainingPlan& plan,
                                 const Ledger& ledger, const GpuOptions& options);

// Options for a device: its compute capability, and what a process may hold on it (usable).
GpuOptions gpu_options_for(const Device& device, std::string alloc_conf);

// The verdict on the device total (nvidia-smi), not on live bytes; an allocator that ran out
// never fits.
Fit fit_gpu(const GpuEstimate& gpu, const Device& device);

// The one verdict of a plan on a device: estimate, solve, advise, sweep, the web page and Python
// all judge with these. CUDA cards and --memory budgets are judged on the device total (the step
// replayed through PyTorch's caching allocator plus the CUDA context: what runs out first on a
// real card); Apple unified memory (no CUDA allocator) and the seeds' memory tiers (budgets of
// live bytes) on the ledger's peak. The textbook convention has no event stream: its peak.
bool judged_on_device_total(const Device& device);
Fit judge(const GpuEstimate& gpu, const Totals& totals, const Device& device);
// Replays the ledger when the device is judged on its total. Errors: a malformed alloc_conf.
Result<Fit> judge(const LoadedModel& model, const TrainingPlan& plan, const Ledger& ledger,
                  const Device& device, const GpuOptions& options);
// The same from the plan alone, with PyTorch's default allocator settings for the device.
Fit judge(const LoadedModel& model, const TrainingPlan& plan, const Device& device);

// The report's three figures, one line each saying what it is and why it differs.
std::string render_gpu_text(const GpuEstimate& gpu, const RenderOptions& render);

// --timeline events: every phase's allocations and frees, grouped by what they are, with the
// allocator's figures after each phase.
std::string render_alloc_timeline(const LoadedModel& model, const TrainingPlan& plan,
                                  const Ledger& ledger, const GpuOptions& options,
                                  const RenderOptions& render);

}  // namespace trainmem

// Answers built from many estimates: solve() (the largest batch or sequence, the smallest GPU or
// tier), sweep() (the peak against batch or sequence), advise() (the changes that make a plan fit)
// and the seed-001 per-tier table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/errors.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// Solvers: the largest micro-batch or sequence that fits a device, and the smallest GPU or tier
// that holds a plan. Exact against estimate(): the answer fits and the next step up does not.

enum class SolveFor { max_batch, max_seq, smallest_gpu, smallest_tier };
std::string_view name_of(SolveFor f);  // "max-batch"
std::optional<SolveFor> parse_solve_for(std::string_view s);

// The granularity of an answer when none is asked: max-seq in multiples of 64 tokens (a sequence
// length is chosen in such steps, and the search is 64 times shorter), everything else in ones.
std::int64_t default_solve_step(SolveFor target);

struct SolveOptions {
  std::int64_t step = 1;  // max-batch / max-seq: the answer is a multiple of this
  // smallest-gpu / smallest-tier: replaces every candidate's reserve (--reserve).
  std::optional<std::int64_t> reserve_bytes;
  // smallest-gpu: skip GPUs without native bf16 when the plan computes in bf16.
  bool require_native_bf16 = true;
};

struct SolveResult {
  SolveFor target = SolveFor::max_batch;
  // Something fits: max-batch/max-seq found a value >= step, or a device holds the plan.
  bool found = false;
  // max-batch / max-seq: the largest value that fits, 0 when even one step does not.
  std::int64_t answer = 0;
  std::int64_t next = 0;             // answer + step: the first value that does not fit
  std::int64_t peak_bytes = 0;       // at the answer (at one step when nothing fits)
  std::int64_t next_peak_bytes = 0;  // at the next step up
  std::int64_t usable_bytes = 0;     // of the device the answer is for
  // Which figure peak_bytes is (Fit::figure): "device total" on CUDA cards, else "peak".
  std::string figure = "peak";
  bool limit_reached = false;          // the value hit the engine's limit and still fits
  std::optional<Device> device;        // smallest-*: the answer; max-*: the device given
  std::optional<Device> next_smaller;  // smallest-*: the largest candidate that does not fit
  int evaluations = 0;                 // estimates run
  std::vector<std::string> notes;
};

// max-batch and max-seq need `device`; smallest-gpu and smallest-tier ignore it.
Result<SolveResult> solve(const LoadedModel& model, const TrainingPlan& plan,
                          const std::optional<Device>& device, SolveFor target,
                          const SolveOptions& options = {});

// Sweeps: the peak against the micro-batch or the sequence length (the seeds' two-axis
// experiment), each point priced by estimate().
enum class SweepAxis { batch, seq };
std::string_view name_of(SweepAxis a);  // "batch", "seq"
std::optional<SweepAxis> parse_sweep_axis(std::string_view s);

struct SweepPoint {
  std::int64_t x = 0;  // batch or seq
  std::int64_t peak_bytes = 0;
  std::int64_t static_bytes = 0;
  std::array<std::int64_t, kTenantCount> at_peak{};  // each tenant's live bytes at the peak
  // With a device: the verdict judge() gives (the device total on CUDA cards), as estimate.
  std::optional<Fit> fit;
};

struct Sweep {
  SweepAxis axis = SweepAxis::batch;
  std::string model;  // the model's name, for titles
  TrainingPlan plan;  // the plan at the first point's other settings
  std::vector<SweepPoint> points;
  std::optional<Device> device;  // draws the limit
};

// The default values for an axis: batch 1..16; seq 256..8192 (or twice the plan's) in 256 steps.
std::vector<std::int64_t> default_sweep_values(SweepAxis axis, const TrainingPlan& plan);

Sweep sweep(const LoadedModel& model, const TrainingPlan& plan, SweepAxis axis,
            const std::vector<std::int64_t>& values, const std::optional<Device>& device);

// Advice: when a plan does not fit, the changes that make it fit, cheapest first. Every option is
// priced by estimate() itself, so an option marked as fitting really fits.
struct AdviceOption {
  std::string change;  // "gradient checkpointing (full)"
  std::string flags;   // the flags that make the change: "--checkpointing full"
  TrainingPlan plan;   // the plan with the change applied
  std::int64_t peak_bytes = 0;
  bool fits = false;
  std::int64_t margin_bytes = 0;  // usable - peak
  std::string cost;               // what it costs: time, optimizer behaviour, quality risk
  int cost_rank = 0;              // smaller is cheaper; combinations add their parts
  int parts = 1;                  // how many single changes it combines
};

struct Advice {
  Fit now;  // the plan as given
  bool fits_now = false;
  // Fitting options first, cheapest first; then single changes that help but are not enough.
  std::vector<AdviceOption> options;
};

Advice advise(const LoadedModel& model, const TrainingPlan& plan, const Device& device);

// The seed-001 per-tier table: for each model, the fixed part (static state: weights, gradients,
// optimizer states, master weights) of a full fine-tune, LoRA and QLoRA, and the smallest memory
// tier that holds LoRA and QLoRA at batch 1 x 1024 tokens with checkpointing plus the tier's
// 2 GB reserve. Computed with estimate(); nothing is re-derived here.

// The models seed 001 tabulates, as preset ids, in its order.
std::vector<std::string_view> seed_table_presets();

struct TableRow {
  std::string model;                  // "Qwen3-8B"
  std::int64_t full_bytes = 0;        // static state of a full fine-tune
  std::int64_t lora_bytes = 0;        // static state of LoRA
  std::int64_t qlora_bytes = 0;       // static state of QLoRA
  std::int64_t lora_peak_bytes = 0;   // what the tier must hold for LoRA (peak of the step)
  std::int64_t qlora_peak_bytes = 0;  // the same for QLoRA
  std::string lora_tier;              // "12-16 GB", as the seed writes it; "over 128 GB" if none
  std::string qlora_tier;
};

// The seed's tiers (DeviceKind::tier in the device database), smallest first.
std::vector<Device> seed_tiers();

// The smallest tier whose usable memory (upper bound - reserve) holds `peak_bytes`.
std::string smallest_tier(std::int64_t peak_bytes, const std::vector<Device>& tiers);

TableRow table_row(const LoadedModel& model, Convention convention,
                   const std::vector<Device>& tiers);

}  // namespace trainmem

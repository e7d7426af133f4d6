// Solvers: the largest micro-batch or sequence that fits a device, and the smallest GPU or tier
// that holds a plan. Exact against estimate(): the answer fits and the next step up does not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/fit.h"
#include "trainmem/model.h"
#include "trainmem/result.h"
#include "trainmem/training_plan.h"

namespace trainmem {

enum class SolveFor { max_batch, max_seq, smallest_gpu, smallest_tier };
std::string_view name_of(SolveFor f);  // "max-batch"
std::optional<SolveFor> parse_solve_for(std::string_view s);

// The plan's peak, as estimate() and totals() compute it.
std::int64_t peak_of(const LoadedModel& model, const TrainingPlan& plan);

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
  std::int64_t next = 0;               // answer + step: the first value that does not fit
  std::int64_t peak_bytes = 0;         // at the answer (at one step when nothing fits)
  std::int64_t next_peak_bytes = 0;    // at the next step up
  std::int64_t usable_bytes = 0;       // of the device the answer is for
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

}  // namespace trainmem

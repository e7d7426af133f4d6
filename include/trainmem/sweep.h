// Sweeps: the peak against the micro-batch or the sequence length (the seeds' two-axis
// experiment), each point priced by estimate().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/ledger.h"
#include "trainmem/model.h"
#include "trainmem/training_plan.h"

namespace trainmem {

enum class SweepAxis { batch, seq };
std::string_view name_of(SweepAxis a);  // "batch", "seq"
std::optional<SweepAxis> parse_sweep_axis(std::string_view s);

struct SweepPoint {
  std::int64_t x = 0;  // batch or seq
  std::int64_t peak_bytes = 0;
  std::int64_t static_bytes = 0;
  std::array<std::int64_t, kTenantCount> at_peak{};  // each tenant's live bytes at the peak
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

// Each tenant's live bytes in one phase slot (the peak's, for the stacked bar).
std::array<std::int64_t, kTenantCount> live_at_slot(const Ledger& ledger, int slot);

}  // namespace trainmem

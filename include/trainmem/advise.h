// Advice: when a plan does not fit, the changes that make it fit, cheapest first. Every option is
// priced by estimate() itself, so an option marked as fitting really fits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/fit.h"
#include "trainmem/model.h"
#include "trainmem/training_plan.h"

namespace trainmem {

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

}  // namespace trainmem

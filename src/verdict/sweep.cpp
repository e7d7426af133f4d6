#include <algorithm>

#include "plan/limits.h"
#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"

namespace trainmem {

std::string_view name_of(SweepAxis a) {
  return a == SweepAxis::batch ? "batch" : "seq";
}

std::optional<SweepAxis> parse_sweep_axis(std::string_view s) {
  if (s == "batch") return SweepAxis::batch;
  if (s == "seq") return SweepAxis::seq;
  return std::nullopt;
}

std::vector<std::int64_t> default_sweep_values(SweepAxis axis, const TrainingPlan& plan) {
  std::vector<std::int64_t> out;
  if (axis == SweepAxis::batch) {
    const std::int64_t top = std::max<std::int64_t>(16, plan.batch * 2);
    // Every batch up to 64; past that powers of two, so a large --batch gives a few dozen points.
    if (top <= 64) {
      for (std::int64_t b = 1; b <= top; ++b) out.push_back(b);
    } else {
      for (std::int64_t b = 1; b < top; b *= 2) out.push_back(b);
      out.push_back(top);
    }
    return out;
  }
  const std::int64_t top = std::max<std::int64_t>(8192, plan.seq * 2);
  const std::int64_t step = std::max<std::int64_t>(256, top / 32 / 256 * 256);
  for (std::int64_t s = step; s <= top; s += step) out.push_back(s);
  return out;
}

Sweep sweep(const LoadedModel& model, const TrainingPlan& plan, SweepAxis axis,
            const std::vector<std::int64_t>& values, const std::optional<Device>& device) {
  Sweep s;
  s.axis = axis;
  s.plan = plan;
  s.device = device;
  for (std::int64_t v : values) {
    TrainingPlan p = plan;
    (axis == SweepAxis::batch ? p.batch : p.seq) = v;
    // A point the estimate would refuse (past GPT-2's learned positions, too large) is no point.
    if (validate(p) || !plan_size_ok(model, p) || check_plan_matches_model(model, p)) continue;
    // Across GPUs each point is the most-loaded rank, judged as estimate judges it (a layout
    // was priced on one GPU).
    const bool one_gpu = is_single_device(p.layout);
    const Ledger ledger = one_gpu ? estimate(model, p) : [&] {
      DistributedEstimate d = estimate_distributed(model, p);
      return std::move(d.ranks[d.most_loaded].ledger);
    }();
    if (s.model.empty()) s.model = ledger.model.name;
    const Totals t = totals(ledger);
    SweepPoint pt;
    pt.x = v;
    pt.peak_bytes = t.peak_bytes;
    pt.static_bytes = t.static_bytes;
    pt.at_peak = live_at_slot(ledger, t.peak_slot);
    if (device && one_gpu) {
      auto f = judge(model, p, ledger, *device, gpu_options_for(*device, p));
      pt.fit = f ? f.value() : fit(t, *device);
    } else if (device) {
      pt.fit = judge(model, p, *device);
    }
    s.points.push_back(pt);
  }
  return s;
}

}  // namespace trainmem

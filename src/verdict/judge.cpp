// The one verdict of a plan on a device (trainmem/device.h: judge). Why the device total: a card
// runs out on what PyTorch's caching allocator has reserved plus the CUDA context
// (c10/cuda/CUDACachingAllocator.cpp; docs/gpu.md), not on the bytes of live tensors, so a
// "fits" on live bytes can OOM. solve and advise search with the same verdict, so the answer they
// print is one `trainmem estimate` agrees with.
#include "verdict/judge.h"

#include <algorithm>

#include "layout/layout.h"
#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"

namespace trainmem {

bool judged_on_device_total(const Device& device) {
  switch (device.kind) {
    case DeviceKind::gpu:
    case DeviceKind::custom:
      return true;
    case DeviceKind::unified:
    case DeviceKind::tier:
      return false;
  }
  return false;
}

Fit judge(const GpuEstimate& gpu, const Totals& totals, const Device& device) {
  if (!gpu.available || totals.overflow || !judged_on_device_total(device)) {
    return fit(totals, device);
  }
  Fit f = fit_gpu(gpu, device);
  f.figure = "device total";
  return f;
}

Result<Fit> judge(const LoadedModel& model, const TrainingPlan& plan, const Ledger& ledger,
                  const Device& device, const GpuOptions& options) {
  const Totals t = totals(ledger);
  if (t.overflow || !judged_on_device_total(device)) return fit(t, device);
  auto gpu = gpu_estimate(model, plan, ledger, options);
  if (!gpu) return gpu.error();
  return judge(gpu.value(), t, device);
}

Fit judge(const LoadedModel& model, const TrainingPlan& plan, const Device& device) {
  // Across GPUs the verdict is the most-loaded rank's, as `trainmem estimate` gives it (advise
  // priced a DDP or ZeRO plan on one GPU while printing commands that keep the layout).
  if (!is_single_device(plan.layout)) {
    auto v = judge_distributed(model, plan, device, gpu_options_for(device, plan));
    if (v && v->fit) return *v->fit;
    if (v) return fit(v->estimate.ranks[v->estimate.most_loaded].totals, device);
  }
  const Ledger ledger = estimate(model, plan);
  // The plan's alloc_conf was checked when the plan was made (settings.cpp, plan_json.cpp).
  auto f = judge(model, plan, ledger, device, gpu_options_for(device, plan));
  return f ? f.value() : fit(totals(ledger), device);
}

Result<DistributedVerdict> judge_distributed(const LoadedModel& model, const TrainingPlan& plan,
                                             const std::optional<Device>& device,
                                             const GpuOptions& options) {
  DistributedVerdict v{estimate_distributed(model, plan), {}, std::nullopt};
  const Ledger& most = v.estimate.ranks[v.estimate.most_loaded].ledger;
  // The rank's own plan: estimate_distributed prices the engine's precision
  // (with_engine_precision).
  auto gpu = gpu_estimate(model, most.plan, most, options);
  if (!gpu) return gpu.error();
  v.gpu = std::move(gpu).value();
  if (device) v.fit = judge(v.gpu, totals(most), *device);
  return v;
}

JudgedCandidates judge_candidates(const LoadedModel& model, const TrainingPlan& plan,
                                  const Device& device, const std::vector<LayoutCandidate>& ranked,
                                  std::size_t count) {
  JudgedCandidates out;
  const GpuOptions options = gpu_options_for(device, plan);
  for (const LayoutCandidate& c : ranked) {
    if (out.fitting.size() >= count) break;
    TrainingPlan p = plan;
    p.layout = c.layout;
    auto v = judge_distributed(model, p, device, options);
    if (!v || !v->fit) continue;  // the plan's alloc_conf was checked when it was made
    if (!v->fit->fits) {
      ++out.over_on_device_total;
      continue;
    }
    out.fitting.push_back({c, *v->fit});
  }
  // The search's order (GPUs, then the proxy) with its ties broken by the headroom the plan
  // prints, the device total's, not the live bytes' the search had.
  std::stable_sort(out.fitting.begin(), out.fitting.end(),
                   [](const JudgedCandidate& a, const JudgedCandidate& b) {
                     const std::int64_t ga = world_size(a.candidate.layout);
                     const std::int64_t gb = world_size(b.candidate.layout);
                     if (ga != gb) return ga < gb;
                     const double pa = a.candidate.cost.proxy_seconds;
                     const double pb = b.candidate.cost.proxy_seconds;
                     if (pa != pb) return pa < pb;
                     return a.fit.margin_bytes > b.fit.margin_bytes;
                   });
  return out;
}

std::optional<JudgedLayout> min_gpus_judged(const LoadedModel& model, const TrainingPlan& plan,
                                            const LayoutPricer& pricer, const Device& device,
                                            const Layout& shape, std::int64_t max_gpus,
                                            std::int64_t gpus_per_node) {
  Device held_back = device;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto c = min_gpus(model, pricer, held_back, shape, max_gpus, gpus_per_node);
    if (!c) return std::nullopt;
    TrainingPlan p = plan;
    p.layout = c->layout;
    auto v = judge_distributed(model, p, device, gpu_options_for(device, plan));
    if (!v || !v->fit) return std::nullopt;
    if (v->fit->fits) return JudgedLayout{c->layout, c->price.host_bytes, *v->fit};
    const std::int64_t more = v->fit->peak_bytes - c->price.peak_bytes;
    if (more <= 0) return std::nullopt;  // over for a reason the reserve cannot express
    held_back.reserve_bytes += more;
  }
  return std::nullopt;
}

}  // namespace trainmem

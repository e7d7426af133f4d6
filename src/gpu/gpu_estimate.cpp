// gpu_estimate(): the ledger's step as an event stream, replayed through the caching allocator
// model, plus the CUDA context and memory outside the allocator (trainmem/estimate.h).
#include <fmt/format.h>

#include <algorithm>

#include "gpu/alloc_events.h"
#include "gpu/caching_allocator.h"
#include "gpu/cuda_context.h"
#include "ledger/run_phases.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"
#include "verdict/judge.h"

namespace trainmem {

Result<GpuEstimate> gpu_estimate(const LoadedModel& model, const TrainingPlan& plan,
                                 const Ledger& ledger, const GpuOptions& o) {
  auto conf = gpu::parse_alloc_conf(o.alloc_conf, o.alloc_conf_field);
  if (!conf) return conf.error();
  GpuEstimate g;
  g.alloc_conf = conf->text;
  g.expandable_segments = conf->expandable_segments;
  if (plan.convention == Convention::textbook) return g;

  const gpu::EventStream stream = gpu::alloc_events(model, plan, ledger);
  const gpu::ContextFigure ctx =
      gpu::cuda_context(o.compute_capability, {o.cuda_major, o.cuda_minor, o.lazy_loading});
  g.available = true;
  g.events = static_cast<std::int64_t>(stream.events.size());
  g.context_bytes = ctx.bytes;
  g.context_estimated = ctx.estimated;
  g.context_source = ctx.source;
  g.outside_pool_bytes = stream.outside_pool_bytes;
  g.cublas_workspace_bytes = gpu::cublas_workspace(o.compute_capability).cublas_bytes;
  if (!ctx.note.empty()) g.notes.push_back(ctx.note);

  gpu::ReplayLimits limits;
  if (o.usable_bytes > 0) {
    limits.device_bytes =
        std::max<std::int64_t>(0, o.usable_bytes - ctx.bytes - stream.outside_pool_bytes);
  }
  gpu::ReplayResult r = gpu::replay(stream.events, *conf, limits, kPhaseSlots);
  if (r.oom) {
    g.oom = true;
    g.oom_slot = r.oom_phase;
    g.oom_request_bytes = r.oom_request_bytes;
    g.notes.push_back(fmt::format(
        "The caching allocator runs out in {} (a {} request, after freeing its cache); the "
        "figures are what the step would need.",
        slot_name(r.oom_phase), format_bytes(r.oom_request_bytes, Unit::gib)));
    r = gpu::replay(stream.events, *conf, {}, kPhaseSlots);
  }
  for (int s = 0; s < kPhaseSlots; ++s) {
    const gpu::PhaseStats& p = r.phases[static_cast<std::size_t>(s)];
    GpuPhase& out = g.phases[static_cast<std::size_t>(s)];
    out.allocated_bytes = p.allocated_bytes;
    out.reserved_bytes = p.reserved_bytes;
    out.largest_free_bytes = p.largest_free_bytes;
    const std::int64_t outside = s >= stream.outside_pool_from_slot ? stream.outside_pool_bytes : 0;
    out.device_total_bytes = p.reserved_bytes + ctx.bytes + outside + g.nccl_bytes;
    if (out.device_total_bytes > g.device_total_bytes) {
      g.device_total_bytes = out.device_total_bytes;
      g.peak_slot = s;
    }
  }
  g.peak_run_phase = std::string(run_phase_at(ledger, g.peak_slot));
  for (int s = 0; s < kPhaseSlots; ++s) {
    if (g.phases[static_cast<std::size_t>(s)].allocated_bytes >
        g.phases[static_cast<std::size_t>(g.peak_allocated_slot)].allocated_bytes) {
      g.peak_allocated_slot = s;
    }
  }
  g.peak_allocated_run_phase = std::string(run_phase_at(ledger, g.peak_allocated_slot));
  g.peak_allocated_bytes = r.peak_allocated_bytes;
  g.peak_reserved_bytes = r.peak_reserved_bytes;
  if (conf->async_backend) {
    g.notes.push_back(
        "backend:cudaMallocAsync is not modelled: allocated and reserved are the native "
        "allocator's.");
  }
  if (stream.outside_pool_bytes > 0) {
    g.notes.push_back(fmt::format(
        "Paged optimizer state ({}) lives in CUDA unified memory, outside PyTorch's allocator: "
        "counted in the device total, not in allocated or reserved.",
        format_bytes(stream.outside_pool_bytes, Unit::gib)));
  }
  return g;
}

GpuOptions gpu_options_for(const Device& device, std::string alloc_conf) {
  GpuOptions o;
  o.alloc_conf = std::move(alloc_conf);
  o.compute_capability = device.compute_capability;
  o.usable_bytes = device.usable_bytes() > 0 ? device.usable_bytes() : 0;
  return o;
}

Fit fit_gpu(const GpuEstimate& gpu, const Device& device) {
  Fit f = fit(gpu.device_total_bytes, device);
  if (gpu.oom && f.fits) {
    // The replay ran out although the unconstrained total looks small enough: fragmentation.
    f.fits = false;
    f.tight = false;
    f.margin_bytes = std::min(f.margin_bytes, -gpu.oom_request_bytes);
  }
  return f;
}

}  // namespace trainmem

// gpu_estimate(): the ledger's step as an event stream, replayed through the caching allocator
// model, plus the CUDA context and memory outside the allocator (trainmem/estimate.h).
#include <fmt/format.h>

#include <algorithm>

#include "gpu/alloc_events.h"
#include "gpu/caching_allocator.h"
#include "gpu/cuda_context.h"
#include "gpu/run_events.h"
#include "ledger/overhead.h"
#include "ledger/run_phases.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"
#include "verdict/judge.h"

namespace trainmem {
namespace {

// Replays the steps at o.step_lengths through one allocator (run_events.h) and records the run's
// peaks; the device total becomes the run's when it is the larger.
void replay_run(const LoadedModel& model, const TrainingPlan& plan, const GpuOptions& o,
                const gpu::AllocatorConfig& conf, const gpu::ReplayLimits& limits,
                const gpu::EventStream& step, std::int64_t workspace, GpuEstimate& g) {
  std::vector<std::int64_t> lengths;
  lengths.reserve(o.step_lengths.size());
  for (std::int64_t l : o.step_lengths) lengths.push_back(std::clamp<std::int64_t>(l, 1, plan.seq));
  const std::optional<gpu::RunStream> run = gpu::run_events(model, plan, lengths, workspace);
  if (!run) {
    g.notes.push_back(
        "The steps of different lengths could not be chained into one run (what one step hands "
        "the next differs between lengths); the figures are one step's at the longest length.");
    return;
  }
  // A step at the plan's length that already runs out says what the run would: replay the run
  // unlimited then, and limited only to find where fragmentation alone runs out.
  const bool step_fits = !g.oom;
  gpu::ReplayResult r =
      gpu::replay(run->events, conf, step_fits ? limits : gpu::ReplayLimits{}, run->phase_count);
  if (r.oom) {
    const int at_step = 1 + r.oom_phase / kPhaseCount;
    g.oom = true;
    g.oom_slot = gpu::run_phase_slot(r.oom_phase);
    g.oom_request_bytes = r.oom_request_bytes;
    g.notes.push_back(fmt::format(
        "Over the run's batches the caching allocator runs out at step {} of {} (a {} request, "
        "after freeing its cache), though one step at the plan's length fits: the blocks that "
        "the lengths before it left split leave no free block large enough; the run's figures "
        "are what it would need.",
        at_step, run->steps, format_bytes(r.oom_request_bytes, Unit::gib)));
    r = gpu::replay(run->events, conf, {}, run->phase_count);
  }
  g.run_steps = run->steps;
  g.run_peak_allocated_bytes = r.peak_allocated_bytes;
  g.run_peak_reserved_bytes = r.peak_reserved_bytes;
  int peak_phase = 0;
  std::int64_t peak_reserved = 0;
  std::int64_t allocated_high = -1;
  for (int ph = 0; ph < run->phase_count; ++ph) {
    const int slot = gpu::run_phase_slot(ph);
    if (r.phases[static_cast<std::size_t>(ph)].allocated_bytes > allocated_high) {
      allocated_high = r.phases[static_cast<std::size_t>(ph)].allocated_bytes;
      g.run_peak_allocated_slot = slot;
    }
    const std::int64_t outside = slot >= step.outside_pool_from_slot ? step.outside_pool_bytes : 0;
    const std::int64_t total =
        r.phases[static_cast<std::size_t>(ph)].reserved_bytes + g.context_bytes + outside;
    if (total > g.run_device_total_bytes) {
      g.run_device_total_bytes = total;
      peak_phase = ph;
      peak_reserved = r.phases[static_cast<std::size_t>(ph)].reserved_bytes;
    }
  }
  g.run_device_total_bytes += g.nccl_bytes;
  g.run_peak_slot = gpu::run_phase_slot(peak_phase);
  const std::string over = fmt::format(
      "Over {} of the dataset's batches (shuffled, each padded to its longest record) the "
      "cache reaches {} reserved",
      run->steps, format_bytes(r.peak_reserved_bytes, Unit::gib));
  if (r.peak_reserved_bytes > g.peak_reserved_bytes) {
    g.notes.push_back(fmt::format(
        "{}, against {} for steps all at the plan's length ({} tokens): blocks cached for one "
        "length do not serve a longer one, and a shorter one splits them.",
        over, format_bytes(g.peak_reserved_bytes, Unit::gib), plan.seq));
  } else {
    g.notes.push_back(fmt::format(
        "{}, no more than one step at the plan's length ({} tokens, {}): its batches are shorter.",
        over, plan.seq, format_bytes(g.peak_reserved_bytes, Unit::gib)));
  }
  if (g.run_device_total_bytes > g.device_total_bytes) {
    g.device_total_bytes = g.run_device_total_bytes;
    g.peak_slot = gpu::run_phase_slot(peak_phase);
    g.total_reserved_bytes = peak_reserved;
  }
}

}  // namespace

Result<GpuEstimate> gpu_estimate(const LoadedModel& model, const TrainingPlan& plan,
                                 const Ledger& ledger, const GpuOptions& o) {
  auto conf = gpu::parse_alloc_conf(o.alloc_conf, o.alloc_conf_field);
  if (!conf) return conf.error();
  GpuEstimate g;
  g.alloc_conf = conf->text;
  g.expandable_segments = conf->expandable_segments;
  g.large_segment_bytes = conf->large_segment_size_bytes;
  // A uniform count (textbook, or --params) has no tensors for the allocator to replay.
  if (plan.convention == Convention::textbook || plan.params_override > 0) return g;

  // The device's cuBLAS workspace per handle (0 without a device: the ledger's line stands).
  const std::int64_t workspace = gpu::replay_cublas_workspace(o.compute_capability);
  const gpu::EventStream stream =
      gpu::alloc_events(model, plan, ledger, {.cublas_workspace_bytes = workspace});
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
  const bool budget_has_workspaces =
      std::any_of(ledger.items.begin(), ledger.items.end(),
                  [](const LedgerItem& i) { return i.id == "overhead.cublas_workspaces"; });
  if (budget_has_workspaces && workspace > 0 && workspace != ledger::kCublasWorkspaceBytes) {
    g.notes.push_back(fmt::format(
        "cuBLAS workspaces on compute capability {}: {} handles x {} (the budget's overhead line "
        "prices sm90's {} each; the figures here use this device's).",
        o.compute_capability, ledger::kCublasHandlesInTraining, format_bytes(workspace, Unit::mib),
        format_bytes(ledger::kCublasWorkspaceBytes, Unit::mib)));
  }

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
      g.total_reserved_bytes = p.reserved_bytes;
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
  if (!o.step_lengths.empty()) {
    replay_run(model, plan, o, *conf, limits, stream, workspace, g);
    g.peak_run_phase = std::string(run_phase_at(ledger, g.peak_slot));
  }
  if (conf->async_backend) {
    g.notes.push_back(
        "backend:cudaMallocAsync is not modelled: allocated and reserved are the native "
        "allocator's.");
  }
  if (stream.outside_pool_bytes > 0) {
    g.notes.push_back(fmt::format(
        "Paged optimizer state ({}, the large tensors' buffers) lives in CUDA unified memory, "
        "outside PyTorch's allocator: counted in the device total, not in allocated or "
        "reserved.",
        format_bytes(stream.outside_pool_bytes, Unit::gib)));
  }
  return g;
}

GpuOptions gpu_options_for(const Device& device, std::string alloc_conf) {
  GpuOptions o;
  o.alloc_conf = std::move(alloc_conf);
  o.compute_capability = device.compute_capability;
  // A seed tier is no card: it is judged on the peak (judged_on_device_total), so the replay
  // runs without its limit, which would report an allocator running out beside a "fits".
  o.usable_bytes =
      device.kind != DeviceKind::tier && device.usable_bytes() > 0 ? device.usable_bytes() : 0;
  return o;
}

GpuOptions gpu_options_for(const std::optional<Device>& device, const TrainingPlan& plan) {
  GpuOptions o;
  if (device) {
    o = gpu_options_for(*device, plan.alloc_conf);
  } else {
    o.alloc_conf = plan.alloc_conf;
  }
  // --versions cuda=13.0: the runtime whose context is priced (parse_library_versions refused
  // any value cuda_runtime_of does not read).
  for (const auto& [library, version] : plan.library_versions) {
    if (library != "cuda") continue;
    if (const auto rt = gpu::cuda_runtime_of(version)) {
      o.cuda_major = rt->cuda_major;
      o.cuda_minor = rt->cuda_minor;
    }
  }
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

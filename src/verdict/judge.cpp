// The one verdict of a plan on a device (trainmem/gpu.h: judge). Why the device total: a card runs
// out on what PyTorch's caching allocator has reserved plus the CUDA context
// (c10/cuda/CUDACachingAllocator.cpp; docs/gpu.md), not on the bytes of live tensors, so a
// "fits" on live bytes can OOM. solve and advise search with the same verdict, so the answer they
// print is one `trainmem estimate` agrees with.
#include "trainmem/estimate.h"
#include "trainmem/gpu.h"

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
  const Ledger ledger = estimate(model, plan);
  // PyTorch's defaults ("" parses to the default configuration) cannot be malformed.
  auto f = judge(model, plan, ledger, device, gpu_options_for(device, ""));
  return f ? f.value() : fit(totals(ledger), device);
}

}  // namespace trainmem

// Which figure a device is judged on (src/verdict/judge.cpp; judge() in trainmem/device.h).
#pragma once

#include "trainmem/device.h"

namespace trainmem {

// True for CUDA cards and --memory budgets (the device total), false for Apple unified memory
// and the seeds' memory tiers (the ledger's peak).
bool judged_on_device_total(const Device& device);

// The verdict on the device total (nvidia-smi), not on live bytes; an allocator that ran out
// never fits.
Fit fit_gpu(const GpuEstimate& gpu, const Device& device);

}  // namespace trainmem

// Which figure a device is judged on (src/verdict/judge.cpp; judge() in trainmem/device.h).
#pragma once

#include "trainmem/device.h"

namespace trainmem {

// True for CUDA cards and --memory budgets (the device total), false for Apple unified memory
// and the seeds' memory tiers (the ledger's peak).
bool judged_on_device_total(const Device& device);

}  // namespace trainmem

// The cuBLAS workspace line of the overhead tenant (overhead.cpp), shared with the allocation
// event stream, which replays it as one workspace per handle (src/gpu/alloc_events.cpp).
#pragma once

#include <cstdint>

namespace trainmem::ledger {

// cuBLAS workspace per handle on sm90 (H100/H200): 4,096 KiB x 8 chunks (PyTorch
// aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize); the ledger, which knows no
// device, prices this one. The GPU replay uses the device's (src/gpu/cuda_context.cpp).
inline constexpr std::int64_t kCublasWorkspaceBytes = std::int64_t{4096} * 1024 * 8;
// Autograd's backward thread gets its own handle, so a training step holds two.
inline constexpr std::int64_t kCublasHandlesInTraining = 2;

}  // namespace trainmem::ledger

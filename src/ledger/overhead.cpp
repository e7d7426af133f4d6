// Overhead tenant: what the framework holds that is not a tensor of the model. The CUDA context
// (outside the allocator) is part of the device's reserve (device.h), not a line here. The
// cuBLAS workspaces are allocated through PyTorch's caching allocator, so they count towards
// max_memory_allocated: one per (handle, stream), and autograd's backward thread has its own
// handle. Size on sm90 (H100/H200): 4,096 KiB x 8 = 32 MiB each (aten/src/ATen/cuda/
// CublasHandlePool.cpp, CUBLAS_WORKSPACE_CONFIG default; accounting.md 8). CPU traces (the
// validation data) have none, so `trainmem validate` drops this tenant.
#include "ledger/overhead.h"

#include <fmt/format.h>

#include "ledger/context.h"
#include "ledger/format.h"

namespace trainmem::ledger {

void add_overhead(const Context& ctx, Items& items) {
  // Apple/MLX has no cuBLAS (FrameworkBehaviour::cublas_workspaces, src/plan/framework.cpp).
  if (ctx.plan.convention == Convention::textbook || !ctx.plan.behaviour.cublas_workspaces) return;
  items.push_back({.id = "overhead.cublas_workspaces",
                   .tenant = Tenant::overhead,
                   .label = "cuBLAS workspaces (forward and backward threads)",
                   .bytes = kCublasHandlesInTraining * kCublasWorkspaceBytes,
                   .formula = "2 handles x 4,096 KiB x 8 (sm90 default)",
                   .source = "PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp",
                   .live = from_phase(0, Phase::forward),
                   .estimated = true});
}

}  // namespace trainmem::ledger

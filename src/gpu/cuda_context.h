// What a CUDA process holds outside PyTorch's caching allocator: the CUDA context (driver state
// and loaded kernel images), by device family and CUDA version; and, for reference, the cuBLAS /
// cuBLASLt workspaces PyTorch allocates per handle *through* the allocator (so they are already
// in memory_allocated). NCCL buffers (distributed runs) are outside the allocator too; one GPU has
// none, and GpuEstimate::nccl_bytes stays 0 until the distributed layouts price them.
// Every figure names its source; figures measured on one family and assumed for another are
// marked estimated. docs/gpu.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainmem::gpu {

struct CudaRuntime {
  int cuda_major = 12;  // the CUDA runtime the torch wheel ships (cu12x since torch 2.1)
  int cuda_minor = 8;
  // CUDA_MODULE_LOADING=LAZY: torch sets it when unset (torch/cuda/__init__.py, since 1.13);
  // the driver's default from CUDA 12.2. Needs CUDA >= 11.7.
  bool lazy_loading = true;
};

// "13.0" -> CUDA 13.0 (lazy loading): a `--versions cuda=` value, or torch.version.cuda as a
// measured row records it. MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH, major 9 to 99; else nullopt.
std::optional<CudaRuntime> cuda_runtime_of(std::string_view version);

struct ContextFigure {
  std::int64_t bytes = 0;
  bool estimated = true;  // false only where this family and runtime were measured
  std::string source;     // where the figure comes from
  std::string note;       // e.g. the assumption made for an unknown device
};

// The CUDA context of one process on a device of `compute_capability` ("8.9"; empty or unknown:
// the note names the size assumed).
ContextFigure cuda_context(std::string_view compute_capability, const CudaRuntime& runtime);

struct WorkspaceFigure {
  std::int64_t cublas_bytes = 0;    // one cuBLAS handle's workspace (per handle and stream)
  std::int64_t cublaslt_bytes = 0;  // one cuBLASLt workspace; 0 when shared with cuBLAS's
  bool estimated = false;
  std::string source;
};

// torch's default workspace per handle for a device family (CUBLAS_WORKSPACE_CONFIG unset).
WorkspaceFigure cublas_workspace(std::string_view compute_capability);
// The per-handle workspace the allocator replay uses: the device's, or 0 without one (then the
// ledger's line, sm90's, stands: StreamOptions::cublas_workspace_bytes).
std::int64_t replay_cublas_workspace(std::string_view cc);

}  // namespace trainmem::gpu

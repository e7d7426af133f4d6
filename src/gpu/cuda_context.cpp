// CUDA context and cuBLAS workspace figures. Each row is a published measurement or a PyTorch
// source default; rows measured on one family are applied to others only as estimates.
#include "gpu/cuda_context.h"

#include <fmt/format.h>

#include <array>

#include "ledger/overhead.h"

namespace trainmem::gpu {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kMB = 1'000'000;

// Context figures. A row applies to the runtime's CUDA version range and loading mode; `family`
// is the compute capability it was measured on. `bare`: measured when the context was made, before
// a training step ran; with lazy module loading the kernels the step runs are loaded into it then
// (kStepKernels), where an eager context holds every kernel from the start.
struct ContextRow {
  int cuda_from;  // major * 100 + minor, inclusive
  int cuda_to;    // exclusive
  bool lazy;
  bool bare;
  std::string_view family;
  std::int64_t bytes;
  std::string_view source;
};

constexpr std::array kContextRows = {
    // nvidia-smi 'used' 1,343 MiB after torch.ones((1,1)).to('cuda') on a V100-SXM2 16GB,
    // driver 460.91.03 / CUDA 11.2, PyTorch ~1.10; less the 2 MiB small-pool segment of the
    // tensor (Hugging Face transformers docs, perf_train_gpu_one.mdx, 2022). Eager: every kernel.
    ContextRow{0, 1107, false, false, "7.0", 1341 * kMiB,
               "transformers docs perf_train_gpu_one (2022): V100, CUDA 11.2, torch 1.10, "
               "1,343 MiB used less the tensor's 2 MiB segment"},
    // PyTorch PR #86509 (lazy module loading by default): 667 MB eager against 287 MB lazy,
    // CUDA 11.7, each at initialisation.
    ContextRow{1107, 9999, false, false, "", 667 * kMB,
               "pytorch/pytorch PR #86509: 667 MB with CUDA_MODULE_LOADING=EAGER (CUDA 11.7)"},
    ContextRow{1107, 1200, true, true, "", 287 * kMB,
               "pytorch/pytorch PR #86509: 287 MB with lazy module loading (CUDA 11.7)"},
    // H200 (sm90), CUDA 13.0, torch 2.11.0+cu130, driver 580.159.04: device used (total - free
    // from cudaMemGetInfo) less torch.cuda.memory_reserved after CUDA's start and the weights'
    // copy, before any GEMM: 552,402,944 B, in each of the three configurations measured first on
    // a fresh GPU (validation/data/gpu-measured.jsonl, gpu_phases). Applied to CUDA 12 on Hopper
    // too (lazy loading there as well). The rows measured after the paged-AdamW one read 60 MiB
    // more in every phase, loaded included: memory the driver kept after that process's managed
    // allocations (docs/accuracy.md, GPU).
    ContextRow{1200, 9999, true, true, "9.0", 552'402'944,
               "trainmem's CUDA run (validation/data/gpu-measured.jsonl, 2026-12-04): H200, CUDA "
               "13.0, torch 2.11, 527 MiB before the first GEMM"},
    // RTX 6000 Ada (sm89), PyTorch 2.10 / cu130: 426 MiB after torch.cuda.mem_get_info(0), which
    // makes the context and runs nothing (unsloth-zoo PR #1053).
    ContextRow{1200, 9999, true, true, "8.9", 426 * kMiB,
               "unslothai/unsloth-zoo PR #1053: 426 MiB on an RTX 6000 Ada at context creation, "
               "torch 2.10 cu130"},
};

// The kernels a training step loads lazily into a bare context: on the H200 run above, device used
// less reserved was 804,061,184 B in every phase from the first backward on, 251,658,240 B
// (240 MiB) over the bare figure, in each of the three configurations (GEMMs, SDPA, the loss,
// AdamW). Measured on Hopper only; applied to the other families' bare rows as an estimate.
struct StepKernels {
  std::string_view family;
  std::int64_t bytes;
  std::string_view source;
};
constexpr StepKernels kStepKernels{
    "9.0", 251'658'240,
    "240 MiB of kernels a training step loads lazily (trainmem's H200 run: 767 MiB from the first "
    "backward on)"};

// Families trainmem knows (data/devices/gpus.json): V100, T4, A100, RTX 30xx/A6000, Jetson Orin,
// Ada, Hopper, Blackwell datacenter and consumer.
constexpr std::array<std::string_view, 9> kKnownFamilies = {"7.0", "7.5", "8.0",  "8.6", "8.7",
                                                            "8.9", "9.0", "10.0", "12.0"};

bool known_family(std::string_view cc) {
  for (std::string_view f : kKnownFamilies) {
    if (f == cc) return true;
  }
  return false;
}

}  // namespace

std::optional<CudaRuntime> cuda_runtime_of(std::string_view version) {
  // MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH, each one or two digits.
  int parts[3] = {0, 0, 0};
  int count = 0;
  while (count < 3) {
    const auto dot = version.find('.');
    const std::string_view digits = version.substr(0, dot);
    if (digits.empty() || digits.size() > 2) return std::nullopt;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      parts[count] = parts[count] * 10 + (c - '0');
    }
    ++count;
    if (dot == std::string_view::npos) break;
    version.remove_prefix(dot + 1);
    if (count == 3) return std::nullopt;
  }
  if (parts[0] < 9) return std::nullopt;  // no torch build ships an older runtime
  return CudaRuntime{parts[0], parts[1], true};
}

ContextFigure cuda_context(std::string_view cc, const CudaRuntime& rt) {
  const int version = rt.cuda_major * 100 + rt.cuda_minor;
  // Lazy loading exists from CUDA 11.7 (CUDA_MODULE_LOADING); before, every kernel loads.
  const bool lazy = rt.lazy_loading && version >= 1107;
  // The device family's own row for this runtime, else the runtime's last row (measured on
  // another family: marked estimated below), else the table's last.
  const ContextRow* own = nullptr;
  const ContextRow* row = &kContextRows.back();
  for (const ContextRow& r : kContextRows) {
    if (version < r.cuda_from || version >= r.cuda_to || r.lazy != lazy) continue;
    if (own == nullptr && !cc.empty() && r.family == cc) own = &r;
    row = &r;
  }
  if (own != nullptr) row = own;
  const bool add_kernels = lazy && row->bare;
  ContextFigure out;
  out.bytes = row->bytes + (add_kernels ? kStepKernels.bytes : 0);
  out.source = add_kernels ? fmt::format("{}; plus {}", row->source, kStepKernels.source)
                           : std::string(row->source);
  out.estimated =
      row->family.empty() || row->family != cc || (add_kernels && kStepKernels.family != cc);
  if (cc.empty() || !known_family(cc)) {
    out.note = fmt::format(
        "CUDA context: no figure for {}; assumed {} MiB (CUDA {}.{}, {} module loading).",
        cc.empty()
            ? std::string(
                  "a device without a known compute capability (no --gpu, a tier or --memory)")
            : fmt::format("compute capability {}", cc),
        out.bytes / kMiB, rt.cuda_major, rt.cuda_minor, lazy ? "lazy" : "eager");
  }
  return out;
}

WorkspaceFigure cublas_workspace(std::string_view cc) {
  // aten/src/ATen/cuda/CublasHandlePool.cpp getChosenWorkspaceSize / CUBLAS_WORKSPACE_CONFIG
  // default: ":4096:8" (4,096 KiB x 8 = 32 MiB) on sm90, ":4096:2:16:8" (4,096 KiB x 2 +
  // 16 KiB x 8) elsewhere; the cuBLASLt workspace shares it in current releases (else
  // CUBLASLT_WORKSPACE_SIZE, 1,024 KiB). Research note accounting.md 8.
  WorkspaceFigure w;
  w.source = "PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp (CUBLAS_WORKSPACE_CONFIG default)";
  const bool hopper = cc == "9.0";
  const bool newer = cc == "10.0" || cc == "12.0";
  if (hopper || newer) {
    w.cublas_bytes = ledger::kCublasWorkspaceBytes;  // the ledger prices this one (overhead.h)
    w.estimated = newer;                             // the sm90 default, assumed for Blackwell
  } else {
    w.cublas_bytes = std::int64_t{4096} * 1024 * 2 + std::int64_t{16} * 1024 * 8;
    w.estimated = cc.empty() || !known_family(cc);
  }
  w.cublaslt_bytes = 0;
  return w;
}

std::int64_t replay_cublas_workspace(std::string_view cc) {
  return cc.empty() ? 0 : cublas_workspace(cc).cublas_bytes;
}

}  // namespace trainmem::gpu

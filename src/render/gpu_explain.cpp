// The arithmetic behind the GPU section of the report (trainmem explain): where the caching
// allocator's replay reaches peak allocated and peak reserved, what reserved holds beyond the live
// tensors, which CUDA context row applies, and the device total's sum (docs/gpu.md).
#include <fmt/format.h>

#include "gpu/caching_allocator.h"
#include "render/gpu_words.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

// The first slot whose reserved high-water is the replay's peak.
int reserved_peak_slot(const GpuEstimate& g) {
  int best = 0;
  for (int s = 1; s < kPhaseSlots; ++s) {
    if (g.phases[static_cast<std::size_t>(s)].reserved_bytes >
        g.phases[static_cast<std::size_t>(best)].reserved_bytes) {
      best = s;
    }
  }
  return best;
}

std::string with_bytes(std::int64_t bytes, Unit unit) {
  return fmt::format("{} ({})", format_bytes(bytes, unit), format_bytes(bytes, Unit::bytes));
}

}  // namespace

std::string render_gpu_explain(const GpuEstimate& g, const Ledger& ledger, const RenderOptions& o) {
  if (!g.available) return "";
  const Unit u = o.unit;
  const Totals t = totals(ledger);
  std::string out = fmt::format(
      "On the GPU: PyTorch's caching allocator replayed over {} allocations and frees in "
      "PyTorch's order (allocator settings: {}; docs/gpu.md)\n",
      g.events, g.alloc_conf.empty() ? "the defaults" : g.alloc_conf);

  // Peak allocated: the ledger's live bytes there, as blocks; the paged optimizer state resident
  // there is in the ledger but outside the pool (each phase's device total holds it).
  const int a_slot = g.peak_allocated_slot;
  const GpuPhase& ap = g.phases[static_cast<std::size_t>(a_slot)];
  const std::int64_t outside_there = outside_pool_at(g, ap.device_total_bytes, ap.reserved_bytes);
  const std::int64_t ledger_there = t.by_slot[static_cast<std::size_t>(a_slot)] - outside_there;
  out += "Peak allocated (torch.cuda.max_memory_allocated)\n";
  out += fmt::format(
      "    = the most bytes held in live blocks at once, reached in {}: the ledger's {} live "
      "there{}, each tensor rounded up to its block\n",
      slot_name(a_slot), format_bytes(ledger_there, u),
      outside_there > 0 ? fmt::format(" (less the paged optimizer state, {}, outside the pool)",
                                      format_bytes(outside_there, u))
                        : "");
  const std::int64_t diff = g.peak_allocated_bytes - ledger_there;
  out += fmt::format(
      "    = {}, {} {} the ledger's: {} B rounding, remainders a block keeps when it is not "
      "split, and this device's cuBLAS workspaces ({} per handle)\n",
      with_bytes(g.peak_allocated_bytes, u), format_bytes(diff >= 0 ? diff : -diff, Unit::mib),
      diff >= 0 ? "above" : "below", gpu::kMinBlockSize,
      format_bytes(g.cublas_workspace_bytes, Unit::mib));
  out += "    source: c10/cuda/CUDACachingAllocator.cpp (round_size, should_split)\n";

  // Peak reserved: the segments, of which part is cached free blocks.
  const int r_slot = reserved_peak_slot(g);
  const GpuPhase& rp = g.phases[static_cast<std::size_t>(r_slot)];
  out += "Peak reserved (torch.cuda.max_memory_reserved)\n";
  out += fmt::format("    = the memory in the allocator's segments ({}), reached in {}\n",
                     segment_words(g), slot_name(r_slot));
  out += fmt::format(
      "    = {}; at most {} of it was live in that phase, so at least {} were cached free "
      "blocks (freed tensors kept for reuse, and the parts of segments too small for the next "
      "request)\n",
      with_bytes(g.peak_reserved_bytes, u), format_bytes(rp.allocated_bytes, u),
      format_bytes(g.peak_reserved_bytes - rp.allocated_bytes, u));
  out +=
      "    source: c10/cuda/CUDACachingAllocator.cpp (get_allocation_size, best fit, "
      "free-and-retry)\n";
  if (g.run_steps > 0) {
    out += fmt::format(
        "    over {} of the dataset's batches: {} reserved, {} allocated (the blocks cached for "
        "every length seen)\n",
        g.run_steps, format_bytes(g.run_peak_reserved_bytes, u),
        format_bytes(g.run_peak_allocated_bytes, u));
  }

  // The CUDA context: outside the allocator, in nvidia-smi.
  out += fmt::format("CUDA context (driver state and loaded kernels; not in reserved){}\n",
                     g.context_estimated ? " (estimated)" : "");
  out += fmt::format("    = {}\n", with_bytes(g.context_bytes, u));
  out += fmt::format("    source: {}\n", g.context_source);

  // The device total: the sum nvidia-smi shows for the process.
  std::string sum = fmt::format("reserved {} in {}", format_bytes(g.total_reserved_bytes, u),
                                slot_name(g.peak_slot));
  sum += fmt::format(" + context {}", format_bytes(g.context_bytes, u));
  const std::int64_t outside_at_total =
      outside_pool_at(g, g.device_total_bytes, g.total_reserved_bytes);
  if (outside_at_total > 0) {
    sum += fmt::format(" + paged optimizer state {} (CUDA unified memory, outside the pool)",
                       format_bytes(outside_at_total, u));
  }
  if (g.nccl_bytes > 0) sum += fmt::format(" + NCCL buffers {}", format_bytes(g.nccl_bytes, u));
  out += "Device total (nvidia-smi)\n";
  out += fmt::format("    = {}\n", sum);
  out += fmt::format("    = {}: the figure the verdict compares with the card\n",
                     with_bytes(g.device_total_bytes, u));
  if (g.oom) {
    out += fmt::format(
        "    the card runs out first, in {} (a {} request the allocator cannot serve even after "
        "freeing its cache): these figures are what the step would need\n",
        slot_name(g.oom_slot), format_bytes(g.oom_request_bytes, u));
  }
  return out;
}

}  // namespace trainmem

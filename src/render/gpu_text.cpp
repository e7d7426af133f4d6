// The GPU section of the text report: peak allocated, peak reserved and the device total, each
// with what PyTorch or the driver calls it and why it differs from the one before.
#include <fmt/format.h>

#include "render/gpu_words.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"

namespace trainmem {

std::string render_gpu_text(const GpuEstimate& g, const RenderOptions& o) {
  if (!g.available) return "";
  const Unit u = o.unit;
  std::string out = fmt::format(
      "On the GPU (PyTorch's caching allocator replayed over {} events; allocator settings: {})\n",
      g.events, g.alloc_conf.empty() ? "the defaults" : g.alloc_conf);
  out += fmt::format(
      "  {:<16} {:>10}  torch.cuda.max_memory_allocated: live tensors, each rounded up to its "
      "block (512 B; unsplit remainders stay with the block)\n",
      "Peak allocated", format_bytes(g.peak_allocated_bytes, u));
  if (!g.peak_allocated_run_phase.empty()) {
    out += fmt::format("  {:<16} {:>10}  reached in {}, {} (beyond the training step)\n", "", "",
                       slot_name(g.peak_allocated_slot), g.peak_allocated_run_phase);
  }
  out += fmt::format(
      "  {:<16} {:>10}  torch.cuda.max_memory_reserved: allocated plus cached free blocks in the "
      "allocator's segments ({})\n",
      "Peak reserved", format_bytes(g.peak_reserved_bytes, u), segment_words(g));
  const bool run_peak = g.run_steps > 0 && g.device_total_bytes == g.run_device_total_bytes;
  if (g.run_steps > 0) {
    out += fmt::format(
        "  {:<16} {:>10}  max_memory_reserved over {} of the dataset's batches (allocated "
        "{}): the blocks cached for every length seen\n",
        "Run reserved", format_bytes(g.run_peak_reserved_bytes, u), g.run_steps,
        format_bytes(g.run_peak_allocated_bytes, u));
  }
  std::string extra =
      fmt::format("{} + CUDA context {}{}", run_peak ? "run reserved" : "reserved",
                  format_bytes(g.context_bytes, u), g.context_estimated ? " (estimated)" : "");
  if (g.outside_pool_bytes > 0) {
    extra += fmt::format(" + paged optimizer state {}", format_bytes(g.outside_pool_bytes, u));
  }
  out += fmt::format("  {:<16} {:>10}  nvidia-smi: {}; reached by {}\n", "Device total",
                     format_bytes(g.device_total_bytes, u), extra,
                     g.peak_run_phase.empty()
                         ? slot_name(g.peak_slot)
                         : fmt::format("{}, {}", slot_name(g.peak_slot), g.peak_run_phase));
  for (const std::string& n : g.notes) out += "  Note: " + n + "\n";
  return out;
}

}  // namespace trainmem

// The human report, shaped like the seeds' memory budget: one line per tenant with a
// proportional bar, the static total, the peak and its phase, and the verdict against a device.
#include <fmt/format.h>

#include <algorithm>

#include "ledger/run_phases.h"
#include "render/bar.h"
#include "trainmem/device.h"
#include "trainmem/render.h"
#include "util/units.h"

namespace trainmem {

std::string proportional_bar(std::int64_t bytes, std::int64_t scale, int width) {
  const int filled = scale <= 0 ? 0
                                : static_cast<int>(std::lround(static_cast<double>(bytes) /
                                                               static_cast<double>(scale) * width));
  std::string out;
  for (int i = 0; i < width; ++i) out += i < std::clamp(filled, 0, width) ? "█" : "·";
  return out;
}

namespace {

// "steady state loaded, the validation pass between steps", or the slot's name alone.
std::string peak_phase_words(const Ledger& ledger, int slot) {
  // The seeds' textbook convention sums every tenant at once, in no phase of a step.
  if (ledger.plan.convention == Convention::textbook) return "the textbook sum of every tenant";
  const std::string_view run = run_phase_at(ledger, slot);
  return run.empty() ? slot_name(slot) : fmt::format("{}, {}", slot_name(slot), run);
}

std::string plan_line(const TrainingPlan& p) {
  std::string method = std::string(name_of(p.method));
  // The base's storage: "qlora nf4", "qlora int8" (bitsandbytes 8-bit LoRA is priced as qlora).
  if (p.method == Method::qlora) method += fmt::format(" {}", name_of(p.quant.kind));
  if (p.method == Method::lora || p.method == Method::qlora) {
    method += fmt::format(" r={}", p.lora.rank);
  }
  return fmt::format(
      "{} · {} · {} ({}) · batch {} x {} tokens{} · checkpointing {} · {} attention · {} loss · "
      "{} convention",
      method, name_of(p.precision), name_of(p.optimizer), name_of(p.optimizer_impl), p.batch, p.seq,
      p.grad_accum > 1 ? fmt::format(" x {} accumulation", p.grad_accum) : "",
      name_of(p.checkpointing), name_of(p.attention), name_of(p.loss), name_of(p.convention));
}

// Bytes of each tenant live at the peak slot.
std::array<std::int64_t, kTenantCount> at_slot(const Ledger& ledger, int slot) {
  std::array<std::int64_t, kTenantCount> out{};
  for (const LedgerItem& i : ledger.items) {
    if (i.live & (PhaseMask{1} << slot)) out[static_cast<std::size_t>(i.tenant)] += i.bytes;
  }
  return out;
}

// The largest figure of each tenant in any single phase slot: what "(up to ...)" reports. A
// tenant's items need not be live together (the loss's buffers and the logits' gradient follow
// one another), so their sum would overstate it.
std::array<std::int64_t, kTenantCount> largest_in_any_slot(const Ledger& ledger) {
  std::array<std::int64_t, kTenantCount> out{};
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    const auto live = at_slot(ledger, slot);
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = std::max(out[k], live[k]);
  }
  return out;
}

}  // namespace

std::string render_text(const Ledger& ledger, const Fit* fit, const RenderOptions& o) {
  const Totals t = totals(ledger);
  const ModelSummary& m = ledger.model;
  std::string out;
  out += fmt::format("{} — from {} ({})\n", m.name, m.source, m.source_detail);
  out += fmt::format("  {} params", with_commas(m.params_total));
  if (m.params_active != m.params_total)
    out += fmt::format(", {} active", short_count(m.params_active));
  if (m.params_published > 0) out += fmt::format(", {} published", short_count(m.params_published));
  // The share as PEFT's print_trainable_parameters prints it: over all params, adapters included.
  out += fmt::format("; trainable {} ({:.4f}% of {})\n", with_commas(m.params_trainable),
                     m.params_with_adapters > 0 ? 100.0 * static_cast<double>(m.params_trainable) /
                                                      static_cast<double>(m.params_with_adapters)
                                                : 0.0,
                     with_commas(m.params_with_adapters));
  out += "  " + plan_line(ledger.plan) + "\n\n";

  const std::int64_t scale = fit ? std::max(fit->capacity_bytes, t.peak_bytes) : t.peak_bytes;
  const auto live = at_slot(ledger, t.peak_slot);
  const auto largest = largest_in_any_slot(ledger);
  out += fmt::format("Memory budget per GPU, in {} (at the peak: {})\n", unit_name(o.unit),
                     peak_phase_words(ledger, t.peak_slot));
  for (int k = 0; k < kTenantCount; ++k) {
    const std::int64_t most = largest[static_cast<std::size_t>(k)];
    if (most == 0) continue;
    const std::int64_t now = live[static_cast<std::size_t>(k)];
    out += fmt::format("  {:<18} {} {:>10}", tenant_title(static_cast<Tenant>(k)),
                       proportional_bar(now, scale, o.bar_width), format_bytes(now, o.unit));
    if (now != most) out += fmt::format("  (up to {} in other phases)", format_bytes(most, o.unit));
    out += "\n";
  }
  out += fmt::format("  {:<18} {} {:>10}\n", "Static state",
                     std::string(static_cast<std::size_t>(o.bar_width), ' '),
                     format_bytes(t.static_bytes, o.unit));
  out += fmt::format("  {:<18} {} {:>10}\n", "Peak",
                     std::string(static_cast<std::size_t>(o.bar_width), ' '),
                     format_bytes(t.peak_bytes, o.unit));
  // The peak as one stacked bar (with a device, the verdict draws it against the capacity).
  if (fit == nullptr) out += "  " + render_text_stacked_bar(ledger, nullptr, o.bar_width) + "\n";
  if (fit != nullptr) {
    // The verdict, with both units side by side: cards and PyTorch count GiB (2^30), marketing
    // and the seeds' arithmetic count GB (10^9); the 7% between them is often the whole margin.
    out += fmt::format("\nDevice: {} ({})\n", fit->device.name, fit->device.id);
    out += fmt::format("  capacity {}, reserved {} ({}), usable {}\n",
                       gb_and_gib(fit->capacity_bytes), format_bytes(fit->reserve_bytes, o.unit),
                       fit->device.reserve_rule.empty() ? "--reserve" : fit->device.reserve_rule,
                       gb_and_gib(fit->usable_bytes));
    out += "  " + render_text_stacked_bar(ledger, fit, o.bar_width) + "\n";
    out += fmt::format("  {} {} against {} usable ({:.0f}% of it)\n",
                       fit->figure == "peak" ? "Peak" : "Device total (nvidia-smi)",
                       gb_and_gib(fit->peak_bytes), format_bytes(fit->usable_bytes, Unit::gib),
                       100.0 * fit->used_fraction);
    if (fit->fits) {
      out += fmt::format("  Fits: {} free", format_bytes(fit->margin_bytes, o.unit));
      if (fit->tight) {
        out += fmt::format(
            "\n  Warning: less than the 2-3 GB of headroom worth leaving ({} free); one unusually "
            "long batch lives in that last gigabyte",
            format_bytes(fit->margin_bytes, Unit::gb));
      }
      out += "\n";
    } else {
      out +=
          fmt::format("  Does not fit: over budget by {} ({}); `trainmem advise` lists fixes\n",
                      format_bytes(-fit->margin_bytes, o.unit),
                      format_bytes(-fit->margin_bytes, o.unit == Unit::gb ? Unit::gib : Unit::gb));
    }
    const Precision pr = ledger.plan.precision;
    if (!fit->device.bf16 &&
        (pr == Precision::bf16_mixed || pr == Precision::bf16 || pr == Precision::autocast_bf16)) {
      out += fmt::format(
          "  Warning: {} has no native bf16{}: bf16 runs emulated and "
          "slow; use --precision fp16-mixed (fp16 with a GradScaler) instead\n",
          fit->device.id,
          fit->device.compute_capability.empty()
              ? ""
              : " (compute capability " + fit->device.compute_capability + ")");
    }
    out +=
        "  (1 GiB = 2^30 bytes = 1.074 GB: divide GB by 1.074 to compare with what the card "
        "reports)\n";
  }
  if (!ledger.notes.empty()) {
    out += "\nNotes:\n";
    for (const std::string& n : ledger.notes) out += "  - " + n + "\n";
  }
  return out;
}

std::string render_explain(const Ledger& ledger, const RenderOptions& o, const GpuEstimate* gpu) {
  const Totals t = totals(ledger);
  std::string out = fmt::format("How each figure for {} is computed ({} convention):\n\n",
                                ledger.model.name, name_of(ledger.plan.convention));
  for (const LedgerItem& i : ledger.items) {
    out += fmt::format("{} — {}{}\n", tenant_title(i.tenant), i.label,
                       i.estimated ? " (estimated)" : "");
    out += fmt::format("    = {}\n", i.formula);
    out += fmt::format("    = {} ({})\n", format_bytes(i.bytes, o.unit),
                       format_bytes(i.bytes, Unit::bytes));
    out += fmt::format("    source: {}\n", i.source);
  }
  out += fmt::format(
      "\nStatic state = weights + gradients + optimizer states + master weights"
      " = {}\n",
      format_bytes(t.static_bytes, o.unit));
  if (ledger.plan.convention == Convention::textbook) {
    out += fmt::format("Peak = the sum of every line (the seeds' textbook convention) = {}\n",
                       format_bytes(t.peak_bytes, o.unit));
  } else {
    out += fmt::format("Peak = the largest sum of lines live in one phase = {} ({})\n",
                       format_bytes(t.peak_bytes, o.unit), peak_phase_words(ledger, t.peak_slot));
  }
  if (gpu != nullptr && gpu->available) out += "\n" + render_gpu_explain(*gpu, ledger, o);
  return out;
}

}  // namespace trainmem

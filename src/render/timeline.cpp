// trainmem estimate --timeline: memory through one optimizer step, one row per phase slot (first
// step, then the steady state), each with a proportional bar, the bytes live, and the tenants
// that make it up. The peak row is marked.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ledger/totals.h"
#include "render/bar.h"
#include "trainmem/render.h"
#include "util/units.h"

namespace trainmem {
namespace {

// The largest tenants live in `slot`, as "weights 3.2, activations 1.1".
std::string composition(const Ledger& ledger, int slot, Unit unit) {
  std::array<std::int64_t, kTenantCount> by{};
  for (const LedgerItem& i : ledger.items) {
    if (i.live & (PhaseMask{1} << slot)) by[static_cast<std::size_t>(i.tenant)] += i.bytes;
  }
  std::string out;
  for (int k = 0; k < kTenantCount; ++k) {
    const std::int64_t b = by[static_cast<std::size_t>(k)];
    if (b == 0) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", tenant_name(static_cast<Tenant>(k)), format_bytes(b, unit, 2));
  }
  return out;
}

}  // namespace

std::string render_timeline(const Ledger& ledger, const RenderOptions& o) {
  const Totals t = totals(ledger);
  std::string out =
      fmt::format("Memory through one step, in {} (peak {} at {})\n", unit_name(o.unit),
                  format_bytes(t.peak_bytes, o.unit), slot_name(t.peak_slot));
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    if (slot % kPhaseCount == 0) {
      out += slot == 0 ? "  first step (optimizer state not yet created)\n" : "  steady state\n";
    }
    const std::int64_t bytes = t.by_slot[static_cast<std::size_t>(slot)];
    const Phase phase = static_cast<Phase>(slot % kPhaseCount);
    out += fmt::format("    {:<16} {} {:>10}{}\n", phase_name(phase),
                       proportional_bar(bytes, t.peak_bytes, o.bar_width),
                       format_bytes(bytes, o.unit), slot == t.peak_slot ? "  ◀ peak" : "");
    const std::string parts = composition(ledger, slot, o.unit);
    if (!parts.empty()) out += fmt::format("    {:<16} {}\n", "", parts);
  }
  return out;
}

}  // namespace trainmem

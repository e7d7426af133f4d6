// The trainmem.timeline/1 document (docs/formats.md): memory through one step, one row per phase
// slot with its live bytes by tenant and the peak marked. The JSON form of render_timeline()
// (--timeline); the web page draws its budget bar and its timeline from it.
#include <nlohmann/json.hpp>

#include "trainmem/estimate.h"
#include "trainmem/render.h"

namespace trainmem {

std::string render_timeline_json(const Ledger& ledger) {
  using nlohmann::json;
  const Totals t = totals(ledger);
  json tenants = json::array();
  for (int k = 0; k < kTenantCount; ++k) {
    const auto tenant = static_cast<Tenant>(k);
    tenants.push_back({{"id", tenant_name(tenant)}, {"title", tenant_title(tenant)}});
  }
  json slots = json::array();
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    // live_at_slot(): each tenant's items live in this slot (estimate.h); their sum is by_slot.
    const auto live = live_at_slot(ledger, slot);
    json by_tenant = json::object();
    for (int k = 0; k < kTenantCount; ++k) {
      by_tenant[std::string(tenant_name(static_cast<Tenant>(k)))] =
          live[static_cast<std::size_t>(k)];
    }
    slots.push_back({{"phase", slot_name(slot)},
                     {"bytes", t.by_slot[static_cast<std::size_t>(slot)]},
                     {"peak", slot == t.peak_slot},
                     {"by_tenant", by_tenant}});
  }
  const json doc = {{"schema", "trainmem.timeline/1"},
                    {"peak_bytes", t.peak_bytes},
                    {"peak_phase", slot_name(t.peak_slot)},
                    {"tenants", tenants},
                    {"slots", slots}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace trainmem

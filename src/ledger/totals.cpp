#include "ledger/totals.h"

#include "trainmem/estimate.h"
#include "util/checked.h"

namespace trainmem {

std::string_view tenant_name(Tenant t) {
  switch (t) {
    case Tenant::weights:
      return "weights";
    case Tenant::gradients:
      return "gradients";
    case Tenant::optimizer_states:
      return "optimizer_states";
    case Tenant::master_weights:
      return "master_weights";
    case Tenant::activations:
      return "activations";
    case Tenant::logits:
      return "logits";
    case Tenant::temporaries:
      return "temporaries";
    case Tenant::overhead:
      return "overhead";
  }
  return "";
}

std::string_view tenant_title(Tenant t) {
  switch (t) {
    case Tenant::weights:
      return "Weights";
    case Tenant::gradients:
      return "Gradients";
    case Tenant::optimizer_states:
      return "Optimizer states";
    case Tenant::master_weights:
      return "Master weights";
    case Tenant::activations:
      return "Activations";
    case Tenant::logits:
      return "Logits and loss";
    case Tenant::temporaries:
      return "Temporaries";
    case Tenant::overhead:
      return "Overhead";
  }
  return "";
}

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::loaded:
      return "loaded";
    case Phase::forward:
      return "forward";
    case Phase::end_of_forward:
      return "end_of_forward";
    case Phase::backward_start:
      return "backward_start";
    case Phase::backward:
      return "backward";
    case Phase::end_of_backward:
      return "end_of_backward";
    case Phase::optimizer_step:
      return "optimizer_step";
  }
  return "";
}

std::string slot_name(int slot) {
  const Phase phase = static_cast<Phase>(slot % kPhaseCount);
  // Appended, not fmt::format: the JSON document names ~100 slots (700 instructions each before).
  std::string out = slot < kPhaseCount ? "first step " : "steady state ";
  out += phase_name(phase);
  return out;
}

Totals totals(const Ledger& ledger) {
  Totals t;
  for (const LedgerItem& item : ledger.items) {
    auto& by_tenant = t.by_tenant[static_cast<std::size_t>(item.tenant)];
    by_tenant = sat_add(by_tenant, item.bytes);
    for (int slot = 0; slot < kPhaseSlots; ++slot) {
      if (item.live & (PhaseMask{1} << slot)) {
        auto& by_slot = t.by_slot[static_cast<std::size_t>(slot)];
        by_slot = sat_add(by_slot, item.bytes);
      }
    }
    // A negative or saturated line is a figure that did not fit 64 bits.
    if (item.bytes < 0 || is_saturated(item.bytes)) t.overflow = true;
  }
  auto tenant = [&](Tenant x) { return t.by_tenant[static_cast<std::size_t>(x)]; };
  t.static_bytes =
      sat_add(sat_add(tenant(Tenant::weights), tenant(Tenant::gradients)),
              sat_add(tenant(Tenant::optimizer_states), tenant(Tenant::master_weights)));
  t.activation_bytes = sat_add(tenant(Tenant::activations), tenant(Tenant::logits));
  // The first slot wins ties, so a peak shared by the first step and the steady state is
  // reported where it first happens.
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    if (t.by_slot[static_cast<std::size_t>(slot)] > t.peak_bytes) {
      t.peak_bytes = t.by_slot[static_cast<std::size_t>(slot)];
      t.peak_slot = slot;
    }
  }
  if (is_saturated(t.peak_bytes) || is_saturated(t.static_bytes)) t.overflow = true;
  return t;
}

std::array<std::int64_t, kTenantCount> live_at_slot(const Ledger& ledger, int slot) {
  std::array<std::int64_t, kTenantCount> out{};
  for (const LedgerItem& i : ledger.items) {
    if ((i.live & (PhaseMask{1} << slot)) != 0) out[static_cast<std::size_t>(i.tenant)] += i.bytes;
  }
  return out;
}

}  // namespace trainmem

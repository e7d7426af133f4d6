// The trainmem.ledger/1 document (docs/formats.md). Integer bytes only; snake_case keys.
#include "render/json.h"

#include <nlohmann/json.hpp>

#include "ledger/run_phases.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

using nlohmann::json;

json phases_of(PhaseMask mask) {
  json out = json::array();
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    if (mask & (PhaseMask{1} << slot)) out.push_back(slot_name(slot));
  }
  return out;
}

}  // namespace

json fit_json(const Fit& f) {
  return {{"device", f.device.id},
          {"device_name", f.device.name},
          {"capacity_bytes", f.capacity_bytes},
          {"reserve_bytes", f.reserve_bytes},
          {"usable_bytes", f.usable_bytes},
          {"peak_bytes", f.peak_bytes},
          {"figure", f.figure},
          {"fits", f.fits},
          {"margin_bytes", f.margin_bytes},
          {"tight", f.tight},
          {"used_fraction", f.used_fraction},
          {"native_bf16", f.device.bf16}};
}

json gpu_json(const GpuEstimate& g) {
  json by_phase = json::object();
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    const GpuPhase& p = g.phases[static_cast<std::size_t>(slot)];
    by_phase[slot_name(slot)] = {{"allocated_bytes", p.allocated_bytes},
                                 {"reserved_bytes", p.reserved_bytes},
                                 {"device_total_bytes", p.device_total_bytes},
                                 {"largest_free_bytes", p.largest_free_bytes}};
  }
  json out = {{"peak_allocated_bytes", g.peak_allocated_bytes},
              {"peak_reserved_bytes", g.peak_reserved_bytes},
              {"device_total_bytes", g.device_total_bytes},
              {"peak_phase", slot_name(g.peak_slot)},
              {"context_bytes", g.context_bytes},
              {"context_estimated", g.context_estimated},
              {"context_source", g.context_source},
              {"outside_pool_bytes", g.outside_pool_bytes},
              {"nccl_bytes", g.nccl_bytes},
              {"cublas_workspace_bytes", g.cublas_workspace_bytes},
              {"alloc_conf", g.alloc_conf},
              {"expandable_segments", g.expandable_segments},
              {"events", g.events},
              {"oom", g.oom},
              {"by_phase", std::move(by_phase)},
              {"notes", g.notes}};
  if (!g.peak_run_phase.empty()) out["peak_run_phase"] = g.peak_run_phase;
  if (!g.peak_allocated_run_phase.empty()) {
    out["peak_allocated_phase"] = slot_name(g.peak_allocated_slot);
    out["peak_allocated_run_phase"] = g.peak_allocated_run_phase;
  }
  if (g.oom) {
    out["oom_phase"] = slot_name(g.oom_slot);
    out["oom_request_bytes"] = g.oom_request_bytes;
  }
  if (g.run_steps > 0) {
    out["run"] = {{"steps", g.run_steps},
                  {"peak_allocated_bytes", g.run_peak_allocated_bytes},
                  {"peak_reserved_bytes", g.run_peak_reserved_bytes},
                  {"device_total_bytes", g.run_device_total_bytes}};
  }
  return out;
}

// The built arrays and objects are moved into the document: an initializer list copies what it is
// given as an lvalue, and the items array copied was a tenth of rendering (docs/performance.md).
json ledger_json(const Ledger& ledger, const Fit* fit, const GpuEstimate* gpu) {
  const Totals t = totals(ledger);
  const ModelSummary& m = ledger.model;
  json items = json::array();
  for (const LedgerItem& i : ledger.items) {
    items.push_back({{"id", i.id},
                     {"tenant", tenant_name(i.tenant)},
                     {"label", i.label},
                     {"bytes", i.bytes},
                     {"formula", i.formula},
                     {"source", i.source},
                     {"estimated", i.estimated},
                     {"phases", phases_of(i.live)}});
  }
  json by_tenant = json::object();
  for (int k = 0; k < kTenantCount; ++k) {
    by_tenant[std::string(tenant_name(static_cast<Tenant>(k)))] =
        t.by_tenant[static_cast<std::size_t>(k)];
  }
  json by_phase = json::object();
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    by_phase[slot_name(slot)] = t.by_slot[static_cast<std::size_t>(slot)];
  }
  json doc = {
      {"schema", "trainmem.ledger/1"},
      {"model",
       {{"name", m.name},
        {"source", m.source},
        {"source_detail", m.source_detail},
        {"model_type", m.model_type},
        {"params_total", m.params_total},
        {"params_trainable", m.params_trainable},
        {"params_active", m.params_active},
        {"params_mtp", m.params_mtp},
        {"params_published", m.params_published},
        {"params_priced", m.params_priced}}},
      {"plan", plan_json(ledger.plan)},
      {"items", std::move(items)},
      {"totals",
       {{"static_bytes", t.static_bytes},
        {"activation_bytes", t.activation_bytes},
        {"peak_bytes", t.peak_bytes},
        {"peak_phase", slot_name(t.peak_slot)},
        {"by_tenant", std::move(by_tenant)},
        {"by_phase", std::move(by_phase)}}},
      {"notes", ledger.notes},
  };
  if (const std::string_view run = run_phase_at(ledger, t.peak_slot); !run.empty()) {
    doc["totals"]["peak_run_phase"] = std::string(run);
  }
  if (fit != nullptr) doc["fit"] = fit_json(*fit);
  if (gpu != nullptr && gpu->available) doc["gpu"] = gpu_json(*gpu);
  return doc;
}

std::string render_json(const Ledger& ledger, const Fit* fit, const GpuEstimate* gpu) {
  return ledger_json(ledger, fit, gpu)
             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace trainmem

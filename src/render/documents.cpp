// The JSON documents other than the ledger: devices, models, solve, advice and sweep
// (docs/formats.md). Built here, in the library, so the command line, the Python package and the
// web page print the same documents.
#include <nlohmann/json.hpp>

#include "render/json.h"
#include "trainmem/model.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"

namespace trainmem {
namespace {

using nlohmann::json;

std::string dump(const json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

json sweep_points_json(const Sweep& s) {
  json pts = json::array();
  for (const SweepPoint& p : s.points) {
    json row = {
        {name_of(s.axis), p.x}, {"peak_bytes", p.peak_bytes}, {"static_bytes", p.static_bytes}};
    if (p.fit) {
      row["fits"] = p.fit->fits;
      row["judged_bytes"] = p.fit->peak_bytes;
      row["figure"] = p.fit->figure;
    }
    pts.push_back(row);
  }
  return pts;
}

}  // namespace

json device_json(const Device& d) {
  return {{"id", d.id},
          {"name", d.name},
          {"kind", name_of(d.kind)},
          {"capacity_bytes", d.capacity_bytes},
          {"reserve_bytes", d.reserve_bytes},
          {"usable_bytes", d.usable_bytes()},
          {"bf16", d.bf16},
          {"compute_capability", d.compute_capability},
          {"reserve_rule", d.reserve_rule},
          {"aliases", d.aliases},
          {"note", d.note}};
}

std::string render_devices_json(const std::vector<Device>& devices) {
  json rows = json::array();
  for (const Device& d : devices) rows.push_back(device_json(d));
  return dump({{"schema", "trainmem.devices/1"}, {"devices", rows}});
}

std::string render_models_json(const std::vector<ModelListing>& models) {
  json rows = json::array();
  for (const ModelListing& m : models) {
    rows.push_back({{"id", m.preset.id},
                    {"hf_id", m.preset.hf_id},
                    {"model_type", m.model_type},
                    {"params_total", m.params_total},
                    {"params_active", m.params_active},
                    {"params_mtp", m.params_mtp},
                    {"published", m.preset.published},
                    {"published_params", m.preset.published_params}});
  }
  return dump({{"schema", "trainmem.models/1"}, {"models", rows}});
}

std::string render_solve_json(const SolveResult& s, std::string_view model, std::int64_t step) {
  json j = {{"schema", "trainmem.solve/1"}, {"model", model},
            {"for", name_of(s.target)},     {"fits", s.found},
            {"peak_bytes", s.peak_bytes},   {"next_peak_bytes", s.next_peak_bytes},
            {"figure", s.figure},           {"usable_bytes", s.usable_bytes},
            {"evaluations", s.evaluations}, {"notes", s.notes}};
  if (s.target == SolveFor::smallest_gpu || s.target == SolveFor::smallest_tier) {
    j["answer"] = s.device ? json(s.device->id) : json(nullptr);
    j["answer_bytes"] = s.device ? s.device->usable_bytes() : 0;
    j["device"] = s.device ? device_json(*s.device) : json(nullptr);
    j["next_device"] = s.next_smaller ? device_json(*s.next_smaller) : json(nullptr);
  } else {
    j["answer"] = s.answer;
    j["next"] = s.next;
    j["step"] = step;
    j["limit_reached"] = s.limit_reached;
    j["device"] = s.device ? device_json(*s.device) : json(nullptr);
  }
  return dump(j);
}

std::string render_advice_json(const Advice& advice, std::string_view model) {
  json opts = json::array();
  for (const AdviceOption& o : advice.options) {
    opts.push_back({{"change", o.change},
                    {"flags", o.flags},
                    {"peak_bytes", o.peak_bytes},
                    {"fits", o.fits},
                    {"margin_bytes", o.margin_bytes},
                    {"cost", o.cost},
                    {"cost_rank", o.cost_rank},
                    {"changes", o.parts}});
  }
  return dump({{"schema", "trainmem.advice/1"},
               {"model", model},
               {"fits_now", advice.fits_now},
               {"now", fit_json(advice.now)},
               {"options", opts}});
}

std::string render_sweep_json(const std::vector<Sweep>& sweeps, std::string_view model,
                              std::string_view over) {
  json j = {{"schema", "trainmem.sweep/1"}, {"model", model}, {"over", over}};
  if (sweeps.size() == 1) {
    j["points"] = sweep_points_json(sweeps[0]);
  } else {
    j["sweeps"] = json::array();
    for (const Sweep& s : sweeps) {
      j["sweeps"].push_back({{"over", name_of(s.axis)}, {"points", sweep_points_json(s)}});
    }
  }
  if (!sweeps.empty() && sweeps[0].device) j["device"] = device_json(*sweeps[0].device);
  return dump(j);
}

}  // namespace trainmem

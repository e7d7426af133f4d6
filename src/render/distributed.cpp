// Reports of a distributed estimate: per-rank ledgers (the most-loaded first), the host per node,
// as text, explain and the trainmem.distributed/1 JSON document (docs/formats.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "render/json.h"
#include "trainmem/device.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

std::string host_block(const DistributedEstimate& d, const RenderOptions& o, bool explain) {
  std::string out = fmt::format("Host memory per node ({} GPUs)\n", d.layout.gpus_per_node);
  if (d.host.items.empty()) {
    out += "  nothing beyond the processes themselves\n";
    return out;
  }
  for (const LedgerItem& item : d.host.items) {
    out += fmt::format("  {:<58} {:>12}\n", item.label, format_bytes(item.bytes, o.unit));
    if (explain) {
      out += fmt::format("      = {}\n      source: {}\n", item.formula, item.source);
    }
  }
  out += fmt::format("  {:<58} {:>12}\n", "Peak host RAM per node",
                     format_bytes(d.host.totals.peak_bytes, o.unit));
  return out;
}

std::string rank_order_heading(const DistributedEstimate& d, std::size_t i) {
  const RankLedger& r = d.ranks[i];
  return fmt::format("── {}{} ──\n", r.name, i == d.most_loaded ? " — most loaded" : "");
}

}  // namespace

std::string render_distributed_text(const DistributedEstimate& d, const Fit* fit,
                                    const RenderOptions& o) {
  std::string out = fmt::format("Layout: {}\n", describe(d.layout));
  out += fmt::format("Most-loaded rank: {}, peak {} per GPU\n\n", d.ranks[d.most_loaded].name,
                     format_bytes(d.ranks[d.most_loaded].totals.peak_bytes, o.unit));
  // The most-loaded rank in full; other stages as one line each.
  out += rank_order_heading(d, d.most_loaded);
  out += render_text(d.ranks[d.most_loaded].ledger, fit, o);
  if (d.ranks.size() > 1) {
    out += "\nPeak per pipeline stage\n";
    for (const RankLedger& r : d.ranks) {
      out += fmt::format("  {:<40} {:>12}\n", r.name, format_bytes(r.totals.peak_bytes, o.unit));
    }
  }
  out += "\n" + host_block(d, o, false);
  if (!d.notes.empty()) {
    out += "\n";
    for (const std::string& n : d.notes) out += "  · " + n + "\n";
  }
  return out;
}

std::string render_distributed_explain(const DistributedEstimate& d, const RenderOptions& o,
                                       const GpuEstimate* gpu) {
  std::string out = fmt::format("Layout: {}\n\n", describe(d.layout));
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    out += rank_order_heading(d, i);
    out += render_explain(d.ranks[i].ledger, o);
    out += "\n";
  }
  out += host_block(d, o, true);
  for (const std::string& n : d.notes) out += "  · " + n + "\n";
  if (gpu != nullptr && gpu->available) {
    out += "\n" + rank_order_heading(d, d.most_loaded) +
           render_gpu_explain(*gpu, d.ranks[d.most_loaded].ledger, o);
  }
  return out;
}

std::string render_distributed_json(const DistributedEstimate& d, const Fit* fit,
                                    const GpuEstimate* gpu) {
  using nlohmann::json;
  const Layout& l = d.layout;
  // The layout's own fields (as the plan writes them) and what follows from them.
  json layout = layout_json(l);
  layout["world_size"] = world_size(l);
  layout["data_parallel"] = d.dp;
  layout["shard_group"] = d.shard_group;
  layout["describe"] = describe(l);
  json ranks = json::array();
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    const RankLedger& r = d.ranks[i];
    ranks.push_back({{"name", r.name},
                     {"stage", r.stage},
                     {"first_rank", r.first_rank},
                     {"ranks", r.ranks},
                     {"peak_bytes", r.totals.peak_bytes},
                     {"ledger", ledger_json(r.ledger, i == d.most_loaded ? fit : nullptr)}});
  }
  json host_items = json::array();
  for (const LedgerItem& item : d.host.items) {
    host_items.push_back({{"label", item.label},
                          {"bytes", item.bytes},
                          {"formula", item.formula},
                          {"source", item.source}});
  }
  json doc = {{"schema", "trainmem.distributed/1"},
              {"layout", layout},
              {"most_loaded",
               {{"index", d.most_loaded},
                {"name", d.ranks[d.most_loaded].name},
                {"peak_bytes", d.ranks[d.most_loaded].totals.peak_bytes}}},
              {"ranks", ranks},
              {"host_per_node", {{"items", host_items}, {"peak_bytes", d.host.totals.peak_bytes}}},
              {"notes", d.notes}};
  // The most-loaded rank's totals and fit at the top, as in trainmem.ledger/1, so a reader of
  // either document finds the peak in the same place.
  const nlohmann::json most = ledger_json(d.ranks[d.most_loaded].ledger, fit, gpu);
  doc["totals"] = most.at("totals");
  if (fit != nullptr) doc["fit"] = fit_json(*fit);
  if (most.contains("gpu")) doc["gpu"] = most.at("gpu");
  return doc.dump(2) + "\n";
}

}  // namespace trainmem

// trainmem estimate --timeline events: the allocation event stream phase by phase, grouped by
// what is allocated or freed, each phase closed by the caching allocator's figures.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "gpu/alloc_events.h"
#include "gpu/caching_allocator.h"
#include "gpu/cuda_context.h"
#include "ledger/totals.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"
#include "util/units.h"

namespace trainmem {
namespace {

struct Group {
  std::int32_t label = -1;
  bool alloc = true;
  std::int64_t tensors = 0;
  std::int64_t bytes = 0;
};

// The stream of `model`, `plan` and `ledger` as render_alloc_timeline and gpu_estimate build it
// (the device's cuBLAS workspaces when it is known).
gpu::EventStream derived_stream(const LoadedModel& model, const TrainingPlan& plan,
                                const Ledger& ledger, const GpuOptions& options) {
  return gpu::alloc_events(
      model, plan, ledger,
      {.cublas_workspace_bytes = gpu::replay_cublas_workspace(options.compute_capability)});
}

}  // namespace

std::string render_alloc_events_json(const LoadedModel& model, const TrainingPlan& plan,
                                     const Ledger& ledger, const GpuOptions& options) {
  using nlohmann::json;
  if (plan.convention == Convention::textbook) return "";
  json doc = {{"schema", "trainmem.alloc-trace/1"}};
  const gpu::EventStream stream = derived_stream(model, plan, ledger, options);
  json phases = json::array();
  for (int slot = 0; slot < kPhaseSlots; ++slot) phases.push_back(slot_name(slot));
  // One tensor per event, as a traced loop records them (alloc_trace.h): a run of `count`
  // tensors becomes `count` ids, allocated in order and freed in order, as replay() treats a run.
  json events = json::array();
  json what = json::object();
  struct Run {
    std::int32_t first = 0, count = 0;
  };
  std::map<std::int32_t, Run> runs;
  std::int32_t next_id = 0;
  for (const gpu::AllocEvent& e : stream.events) {
    if (e.op == gpu::Op::alloc) {
      runs[e.id] = {next_id, e.count};
      const std::string label =
          e.label >= 0 ? stream.labels[static_cast<std::size_t>(e.label)] : std::string();
      for (std::int32_t n = 0; n < e.count; ++n) {
        events.push_back({"a", next_id, e.bytes, e.phase});
        if (!label.empty()) what[std::to_string(next_id)] = label;
        ++next_id;
      }
    } else {
      const Run r = runs[e.id];
      for (std::int32_t n = 0; n < r.count; ++n) events.push_back({"f", r.first + n, 0, e.phase});
    }
  }
  doc["phases"] = std::move(phases);
  doc["events"] = std::move(events);
  doc["what"] = std::move(what);
  return doc.dump() + "\n";
}

std::string render_alloc_timeline(const LoadedModel& model, const TrainingPlan& plan,
                                  const Ledger& ledger, const GpuOptions& options,
                                  const RenderOptions& render) {
  auto conf = gpu::parse_alloc_conf(options.alloc_conf, options.alloc_conf_field);
  if (!conf) return conf.error().message() + "\n";
  if (plan.convention == Convention::textbook) {
    return "Allocation events: none for the textbook convention (uniform rates, no tensors).\n";
  }
  const gpu::EventStream stream = derived_stream(model, plan, ledger, options);
  const gpu::ReplayResult r = gpu::replay(stream.events, *conf, {}, kPhaseSlots);
  const Unit u = render.unit;
  std::string out = fmt::format(
      "Allocation events through two steps, in {} (PyTorch's order; the caching allocator "
      "replayed with allocator settings: {})\n",
      unit_name(u), conf->text.empty() ? "the defaults" : conf->text);
  struct Live {
    std::int32_t label = -1;
    std::int64_t tensors = 0;
    std::int64_t bytes = 0;
  };
  std::map<std::int32_t, Live> by_id;
  std::size_t k = 0;
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    if (slot % kPhaseCount == 0) {
      out += slot == 0 ? "  first step (optimizer state created lazily at its step)\n"
                       : "  steady state\n";
    }
    std::vector<Group> groups;
    auto add = [&](std::int32_t label, bool alloc, std::int64_t tensors, std::int64_t bytes) {
      for (Group& g : groups) {
        if (g.label == label && g.alloc == alloc) {
          g.tensors += tensors;
          g.bytes += bytes;
          return;
        }
      }
      groups.push_back({label, alloc, tensors, bytes});
    };
    for (; k < stream.events.size() && stream.events[k].phase == slot; ++k) {
      const gpu::AllocEvent& e = stream.events[k];
      if (e.op == gpu::Op::alloc) {
        by_id[e.id] = {e.label, e.count, e.bytes * e.count};
        add(e.label, true, e.count, e.bytes * e.count);
      } else {
        const Live& l = by_id[e.id];
        add(l.label, false, l.tensors, l.bytes);
      }
    }
    const gpu::PhaseStats& p = r.phases[static_cast<std::size_t>(slot)];
    out += fmt::format("    {:<16} allocated {:>9}  reserved {:>9}  largest free block {:>9}\n",
                       phase_name(static_cast<Phase>(slot % kPhaseCount)),
                       format_bytes(p.allocated_bytes, u), format_bytes(p.reserved_bytes, u),
                       format_bytes(p.largest_free_bytes, u));
    for (const Group& g : groups) {
      const std::string what =
          g.label >= 0 ? stream.labels[static_cast<std::size_t>(g.label)] : std::string("?");
      out += fmt::format("      {} {:>6} x {:>9}  {}\n", g.alloc ? "+" : "-", g.tensors,
                         format_bytes(g.bytes, u), what);
    }
  }
  out += fmt::format("  {} events; peak allocated {}, peak reserved {} (before the CUDA context)\n",
                     stream.events.size(), format_bytes(r.peak_allocated_bytes, u),
                     format_bytes(r.peak_reserved_bytes, u));
  return out;
}

}  // namespace trainmem

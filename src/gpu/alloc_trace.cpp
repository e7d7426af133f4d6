#include "gpu/alloc_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "io/json_parse.h"

namespace trainmem::gpu {

namespace {

using nlohmann::json;

Error trace_error(const std::string& file, const std::string& field, std::string reason) {
  return Error{ErrorCode::bad_input, file, field, std::move(reason)};
}

}  // namespace

Result<AllocTrace> parse_alloc_trace(std::string_view text, const std::string& file) {
  auto parsed = io::parse_json(text, file);
  if (!parsed) return parsed.error();
  const json& doc = parsed.value();
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != "trainmem.alloc-trace/1") {
    return trace_error(file, "schema", "is not trainmem.alloc-trace/1");
  }
  AllocTrace out;
  if (!doc.contains("phases") || !doc["phases"].is_array()) {
    return trace_error(file, "phases", "must be a list of phase names");
  }
  for (const json& p : doc["phases"]) {
    if (!p.is_string()) return trace_error(file, "phases", "must be a list of phase names");
    out.phases.push_back(p.get<std::string>());
  }
  if (out.phases.size() > static_cast<std::size_t>(std::numeric_limits<std::int16_t>::max())) {
    return trace_error(file, "phases", "has more phases than a step has");
  }
  if (!doc.contains("events") || !doc["events"].is_array()) {
    return trace_error(file, "events", "must be a list of [op, id, bytes, phase]");
  }
  std::unordered_set<std::int64_t> live;
  std::size_t index = 0;
  for (const json& e : doc["events"]) {
    const std::string field = fmt::format("events[{}]", index++);
    if (!e.is_array() || e.size() != 4 || !e[0].is_string() || !e[1].is_number_integer() ||
        !e[2].is_number_integer() || !e[3].is_number_integer()) {
      return trace_error(file, field, "must be [\"a\" or \"f\", id, bytes, phase]");
    }
    const std::string op = e[0].get<std::string>();
    const std::int64_t id = e[1].get<std::int64_t>();
    const std::int64_t bytes = e[2].get<std::int64_t>();
    const std::int64_t phase = e[3].get<std::int64_t>();
    if (phase < 0 || phase >= static_cast<std::int64_t>(out.phases.size())) {
      return trace_error(file, field, fmt::format("phase {} is not one of the phases", phase));
    }
    if (id < 0 || id > std::numeric_limits<std::int32_t>::max()) {
      return trace_error(file, field, fmt::format("id {} is out of range", id));
    }
    AllocEvent ev;
    ev.phase = static_cast<std::int16_t>(phase);
    ev.id = static_cast<std::int32_t>(id);
    if (op == "a") {
      if (bytes < 0 || bytes > (std::int64_t{1} << 50)) {
        return trace_error(file, field, fmt::format("size {} is not a tensor's", bytes));
      }
      if (!live.insert(id).second) {
        return trace_error(file, field, fmt::format("id {} is allocated while live", id));
      }
      ev.op = Op::alloc;
      ev.bytes = bytes;
    } else if (op == "f") {
      if (live.erase(id) == 0) {
        return trace_error(file, field, fmt::format("frees id {}, which is not live", id));
      }
      ev.op = Op::free;
    } else {
      return trace_error(file, field, fmt::format("op '{}' is not \"a\" or \"f\"", op));
    }
    out.events.push_back(ev);
  }
  return out;
}

void add_allocation_at(AllocTrace& trace, std::string_view phase, std::int64_t bytes) {
  const auto named = std::find(trace.phases.begin(), trace.phases.end(), phase);
  if (named == trace.phases.end()) return;
  const auto slot = static_cast<std::int16_t>(named - trace.phases.begin());
  std::int32_t id = 0;
  for (const AllocEvent& e : trace.events) id = std::max(id, e.id);
  AllocEvent ev;
  ev.op = Op::alloc;
  ev.phase = slot;
  ev.id = id + 1;
  ev.bytes = bytes;
  const auto first = std::find_if(trace.events.begin(), trace.events.end(),
                                  [slot](const AllocEvent& e) { return e.phase == slot; });
  trace.events.insert(first, ev);
}

void add_cublas_workspaces(AllocTrace& trace, std::int64_t bytes) {
  add_allocation_at(trace, "s1:forward", bytes);
  add_allocation_at(trace, "s1:backward", bytes);
}

}  // namespace trainmem::gpu

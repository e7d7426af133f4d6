#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "gpu/cuda_context.h"
#include "io/json_parse.h"
#include "io/read_file.h"
#include "trainmem/import.h"
#include "trainmem/validate.h"
#include "util/json_text.h"

namespace trainmem {
namespace {

using nlohmann::json;

std::string as_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return json_excerpt(v);
}

// An integer field: present, an integer (not 1e30 or 2.5), in int64 range.
std::optional<std::int64_t> integer(const json& v) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      return std::nullopt;
    }
    return v.get<std::int64_t>();
  }
  return std::nullopt;
}

Result<MeasurementRecord> parse_record(const json& j, const std::string& where) {
  // value() would throw on a schema that is not a string; check the type first.
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string() ||
      j["schema"].get<std::string>() != "trainmem.measurement/1") {
    return bad_input(where, "schema", "expected \"trainmem.measurement/1\"");
  }
  // Each field's presence and type, named in the error (json::at and get would say only
  // "json error 302").
  auto text_field = [&](const json& parent, const char* key, const std::string& path,
                        bool required) -> std::optional<Error> {
    if (!parent.contains(key)) {
      if (!required) return std::nullopt;
      return bad_input(where, path, "is missing");
    }
    if (!parent[key].is_string()) {
      return bad_input(where, path,
                       fmt::format("must be a string, got {}", json_excerpt(parent[key])));
    }
    return std::nullopt;
  };
  if (auto e = text_field(j, "id", "id", true)) return *e;
  if (!j.contains("config") || !j["config"].is_object()) {
    return bad_input(where, "config", "must be an object with the row's model and plan");
  }
  if (auto e = text_field(j["config"], "model", "config.model", true)) return *e;
  if (!j.contains("measured") || !j["measured"].is_object()) {
    return bad_input(where, "measured", "must be an object with peak_bytes");
  }
  for (const char* key : {"peak_phase", "device", "tracker", "metric", "device_id"}) {
    if (auto e = text_field(j["measured"], key, std::string("measured.") + key, false)) return *e;
  }
  if (!j["measured"].contains("peak_bytes")) {
    return bad_input(where, "measured.peak_bytes", "is missing");
  }
  MeasurementRecord r;
  try {
    r.id = j.at("id").get<std::string>();
    const json& config = j.at("config");
    r.model = config.at("model").get<std::string>();
    for (const auto& [key, value] : config.items()) {
      if (key != "model" && key != "layout" && key != "step_lengths" && !value.is_null()) {
        r.plan[key] = as_text(value);
      }
    }
    if (config.contains("step_lengths")) {
      const json& lengths = config["step_lengths"];
      if (!lengths.is_array() || lengths.empty() || std::ssize(lengths) > kRunSteps) {
        return bad_input(where, "config.step_lengths",
                         fmt::format("must be a list of 1 to {} token counts (the run's "
                                     "micro-batch lengths, in order)",
                                     kRunSteps));
      }
      for (std::size_t k = 0; k < lengths.size(); ++k) {
        const auto n = integer(lengths[k]);
        if (!n || *n < 1) {
          return bad_input(where, fmt::format("config.step_lengths[{}]", k),
                           fmt::format("must be a positive integer token count, got {}",
                                       json_excerpt(lengths[k])));
        }
        r.step_lengths.push_back(*n);
      }
    }
    if (config.contains("layout")) {
      const json& layout = config["layout"];
      if (!layout.is_object()) {
        return bad_input(where, "config.layout", "must be an object of layout settings");
      }
      for (const auto& [key, value] : layout.items()) {
        if (value.is_object() || value.is_array() || value.is_null()) {
          return bad_input(where, "config.layout." + key, "must be a number, string or boolean");
        }
        r.layout[key] = as_text(value);
      }
    }
    const json& m = j.at("measured");
    const auto peak = integer(m.at("peak_bytes"));
    if (!peak) return bad_input(where, "measured.peak_bytes", "must be an integer byte count");
    r.peak_bytes = *peak;
    r.peak_phase = m.value("peak_phase", "");
    if (m.contains("peak_step")) {
      const auto step = integer(m["peak_step"]);
      if (!step || *step < 0 || *step > 1'000'000) {
        return bad_input(where, "measured.peak_step", "must be a small non-negative integer");
      }
      r.peak_step = static_cast<int>(*step);
    }
    r.device = m.value("device", "");
    r.tracker = m.value("tracker", "");
    r.metric = m.value("metric", "");
    r.device_id = m.value("device_id", "");
    if (m.contains("cuda_context")) {
      const json& c = m["cuda_context"];
      if (!c.is_object()) return bad_input(where, "measured.cuda_context", "must be an object");
      for (const char* key : {"device_name", "cuda"}) {
        if (c.contains(key) && !c[key].is_string()) {
          return bad_input(where, fmt::format("measured.cuda_context.{}", key), "must be a string");
        }
      }
      r.device_name = c.value("device_name", "");
      r.cuda_version = c.value("cuda", "");
      if (!r.cuda_version.empty() && !gpu::cuda_runtime_of(r.cuda_version)) {
        return bad_input(where, "measured.cuda_context.cuda",
                         fmt::format("'{}' is no CUDA runtime version (torch.version.cuda, "
                                     "e.g. 12.8)",
                                     r.cuda_version));
      }
    }
    if (j.contains("source") && j["source"].is_object()) r.source = j["source"].value("name", "");
    if (m.contains("by_category")) {
      for (std::size_t c = 0; c < kMeasuredCategories.size(); ++c) {
        const json& cats = m["by_category"];
        const std::string key(kMeasuredCategories[c]);
        if (!cats.is_object() || !cats.contains(key)) continue;
        const auto bytes = integer(cats[key]);
        if (!bytes || *bytes < 0) {
          return bad_input(where, "measured.by_category." + key,
                           "must be a non-negative integer byte count");
        }
        r.by_category[c] = *bytes;
      }
    }
  } catch (const json::exception& e) {
    // e.what() can quote the input at length; the error id and kind are enough to act on.
    return bad_input(where, "",
                     fmt::format("malformed record (a field is missing or of the wrong "
                                 "type; json error {})",
                                 e.id));
  }
  if (r.peak_bytes <= 0) return bad_input(where, "measured.peak_bytes", "must be positive");
  if (!r.metric.empty() && r.metric != "max_memory_allocated" &&
      r.metric != "max_memory_reserved" && r.metric != "nvidia-smi") {
    return bad_input(where, "measured.metric",
                     fmt::format("'{}' is not max_memory_allocated, max_memory_reserved or "
                                 "nvidia-smi",
                                 r.metric));
  }
  return r;
}

}  // namespace

Result<std::vector<MeasurementRecord>> read_measurements(const std::string& path) {
  auto text = io::read_regular_file(path, io::kMaxMeasurementBytes, "a measurement file");
  if (!text) return text.error();
  std::vector<MeasurementRecord> out;
  std::istringstream in(text.value());
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", path, number);
    auto parsed = io::parse_json(line, where);
    if (!parsed) return parsed.error();
    auto record = parse_record(parsed.value(), where);
    if (!record) return record.error();
    out.push_back(std::move(record).value());
  }
  if (out.empty()) return bad_input(path, "", "holds no measurements");
  return out;
}

}  // namespace trainmem

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "trainmem/validate.h"

namespace trainmem {
namespace {

using nlohmann::json;

std::string as_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

Result<MeasurementRecord> parse_record(const json& j, const std::string& where) {
  if (!j.is_object() || j.value("schema", "") != "trainmem.measurement/1") {
    return bad_input(where, "schema", "expected \"trainmem.measurement/1\"");
  }
  MeasurementRecord r;
  try {
    r.id = j.at("id").get<std::string>();
    const json& config = j.at("config");
    r.model = config.at("model").get<std::string>();
    for (const auto& [key, value] : config.items()) {
      if (key != "model" && !value.is_null()) r.plan[key] = as_text(value);
    }
    const json& m = j.at("measured");
    r.peak_bytes = m.at("peak_bytes").get<std::int64_t>();
    r.peak_phase = m.value("peak_phase", "");
    r.peak_step = m.value("peak_step", 0);
    r.device = m.value("device", "");
    r.tracker = m.value("tracker", "");
    if (m.contains("by_category")) {
      for (std::size_t c = 0; c < kMeasuredCategories.size(); ++c) {
        r.by_category[c] = m["by_category"].value(kMeasuredCategories[c], std::int64_t{0});
      }
    }
  } catch (const json::exception& e) {
    return bad_input(where, "", fmt::format("malformed record: {}", e.what()));
  }
  if (r.peak_bytes <= 0) return bad_input(where, "measured.peak_bytes", "must be positive");
  return r;
}

}  // namespace

Result<std::vector<MeasurementRecord>> read_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) return bad_input(path, "", "cannot be opened");
  std::vector<MeasurementRecord> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", path, number);
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      return bad_input(where, "", fmt::format("not valid JSON (near byte {})", e.byte));
    }
    auto record = parse_record(j, where);
    if (!record) return record.error();
    out.push_back(std::move(record).value());
  }
  if (out.empty()) return bad_input(path, "", "holds no measurements");
  return out;
}

}  // namespace trainmem

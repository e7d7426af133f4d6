// The device database, embedded from data/devices/*.json.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "embedded_data.h"
#include "trainmem/device.h"
#include "trainmem/units.h"

namespace trainmem {
namespace {

using nlohmann::json;

DeviceKind kind_from(const std::string& s) {
  if (s == "gpu") return DeviceKind::gpu;
  if (s == "unified") return DeviceKind::unified;
  if (s == "tier") return DeviceKind::tier;
  return DeviceKind::custom;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::vector<Device> list_devices() {
  std::vector<Device> out;
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path.rfind("devices/", 0) != 0) continue;
    const json j = json::parse(f.contents);  // our own data, checked by a test
    for (const json& d : j.at("devices")) {
      Device dev;
      dev.id = d.at("id").get<std::string>();
      dev.name = d.at("name").get<std::string>();
      dev.kind = kind_from(d.at("kind").get<std::string>());
      dev.capacity_bytes = d.at("total_mib").get<std::int64_t>() * kMiB;
      dev.reserve_bytes = d.value("reserve_mib", std::int64_t{0}) * kMiB;
      dev.bf16 = d.value("bf16", true);
      dev.note = d.value("note", std::string());
      out.push_back(std::move(dev));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Device& a, const Device& b) {
    return a.capacity_bytes < b.capacity_bytes;
  });
  return out;
}

Result<Device> find_device(std::string_view id) {
  const std::string key = lower(id);
  std::vector<Device> all = list_devices();
  for (const Device& d : all) {
    if (d.id == key) return d;
  }
  std::string names;
  for (const Device& d : all) {
    if (d.id.find(key.substr(0, 3)) != std::string::npos)
      names += (names.empty() ? "" : ", ") + d.id;
  }
  return Error{ErrorCode::not_found, "", "--gpu",
               fmt::format("unknown device '{}'{} (trainmem gpus lists them)", id,
                           names.empty() ? "" : "; did you mean: " + names + "?")};
}

}  // namespace trainmem

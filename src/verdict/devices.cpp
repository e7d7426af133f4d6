// The device database, embedded from data/devices/*.json.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/device_file.h"
#include "trainmem/device.h"
#include "trainmem/render.h"
#include "util/edit_distance.h"
#include "util/embedded_data.h"

namespace trainmem {
namespace {

using nlohmann::json;

// Devices added by use_user_devices (the command line's --devices FILE), for this process.
std::vector<Device>& user_devices() {
  static std::vector<Device> devices;
  return devices;
}

std::vector<Device> builtin_devices() {
  std::vector<Device> out;
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path.rfind("devices/", 0) != 0) continue;
    const json j = json::parse(f.contents);  // our own data, checked by a test (device_test.cpp)
    const json& rows = j.at("devices");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto d =
          io::device_from_json(rows[i], std::string(f.path), "devices[" + std::to_string(i) + "]");
      // Our own data: a row the checks refuse is a bug in data/devices, found by device_test.
      if (!d) throw std::logic_error(d.error().message());
      out.push_back(std::move(d).value());
    }
  }
  return out;
}

// User rows first (they win alias and name matches), then the built-ins they do not replace.
std::vector<Device> lookup_order() {
  std::vector<Device> out = user_devices();
  for (Device& d : builtin_devices()) {
    const bool replaced =
        std::any_of(out.begin(), out.end(), [&](const Device& u) { return u.id == d.id; });
    if (!replaced) out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

std::string_view name_of(DeviceKind k) {
  switch (k) {
    case DeviceKind::gpu:
      return "gpu";
    case DeviceKind::unified:
      return "unified";
    case DeviceKind::tier:
      return "tier";
    case DeviceKind::custom:
      return "custom";
  }
  return "custom";
}

std::int64_t default_gpu_reserve(std::int64_t capacity_bytes) {
  // 2% rounded up to a whole MiB.
  const std::int64_t two_percent = (capacity_bytes / 50 + kMiB - 1) / kMiB * kMiB;
  return std::max(kGiB, two_percent);
}

void use_user_devices(std::vector<Device> devices) {
  user_devices() = std::move(devices);
}

std::vector<Device> list_devices() {
  std::vector<Device> out = lookup_order();
  std::stable_sort(out.begin(), out.end(), [](const Device& a, const Device& b) {
    if (a.capacity_bytes != b.capacity_bytes) return a.capacity_bytes < b.capacity_bytes;
    return a.id < b.id;
  });
  return out;
}

std::vector<std::string> nearest_devices(std::string_view name, std::size_t n) {
  const std::string key = io::normalise_device_name(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const Device& d : list_devices()) {
    std::size_t best = edit_distance(key, d.id);
    if (!key.empty() && d.id.find(key) != std::string::npos) best = 0;
    for (const std::string& a : d.aliases) {
      best = std::min(best, edit_distance(key, a));
    }
    scored.emplace_back(best, d.id);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  const std::size_t limit = std::max<std::size_t>(3, key.size() / 2);
  for (const auto& [dist, id] : scored) {
    if (out.size() >= n || dist > limit) break;
    out.push_back(id);
  }
  return out;
}

Result<Device> find_device(std::string_view id) {
  const std::string key = io::normalise_device_name(id);
  const std::vector<Device> all = lookup_order();
  for (const Device& d : all) {
    if (d.id == key) return d;
  }
  for (const Device& d : all) {
    for (const std::string& a : d.aliases) {
      if (a == key) return d;
    }
  }
  // The name as nvidia-smi --query-gpu=name prints it ("NVIDIA GeForce RTX 4090").
  for (const Device& d : all) {
    if (d.kind == DeviceKind::gpu && io::normalise_device_name(d.name) == key) return d;
  }
  // nvidia-smi prints one name for a card sold in several memory sizes ("NVIDIA GeForce RTX
  // 3080": 10 GB and 12 GB). Such rows carry the size in parentheses, and the bare name is refused
  // rather than priced against a capacity that may not be the user's.
  std::string sized;
  for (const Device& d : all) {
    const auto open = d.name.find(" (");
    const auto close = d.name.rfind(')');
    if (d.kind != DeviceKind::gpu || open == std::string::npos || close == std::string::npos ||
        close < open || io::normalise_device_name(d.name.substr(0, open)) != key) {
      continue;
    }
    sized += fmt::format("{}{} ({})", sized.empty() ? "" : ", ", d.id,
                         d.name.substr(open + 2, close - open - 2));
  }
  if (!sized.empty()) {
    return Error{ErrorCode::not_found, "", "device",
                 fmt::format("'{}' is the name nvidia-smi prints for more than one memory size; "
                             "give the id of yours: {}, or --memory NMiB with the N that "
                             "nvidia-smi --query-gpu=memory.total prints",
                             id, sized)};
  }
  std::string names;
  for (const std::string& n : nearest_devices(key)) names += (names.empty() ? "" : ", ") + n;
  return Error{ErrorCode::not_found, "", "device",
               fmt::format("unknown device '{}'{} (trainmem gpus lists them)", id,
                           names.empty() ? "" : "; did you mean: " + names + "?")};
}

Device custom_device(std::int64_t bytes) {
  Device d;
  d.id = "custom";
  d.name = "custom memory budget";
  d.kind = DeviceKind::custom;
  d.capacity_bytes = bytes;
  d.reserve_rule = "none unless --reserve is given";
  d.note = "--memory";
  return d;
}

}  // namespace trainmem

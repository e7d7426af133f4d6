// The device database, embedded from data/devices/*.json.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "trainmem/device.h"
#include "trainmem/units.h"
#include "util/edit_distance.h"
#include "util/embedded_data.h"

namespace trainmem {
namespace {

using nlohmann::json;

DeviceKind kind_from(const std::string& s) {
  if (s == "gpu") return DeviceKind::gpu;
  if (s == "unified") return DeviceKind::unified;
  if (s == "tier") return DeviceKind::tier;
  return DeviceKind::custom;
}

// Lower case, with spaces and underscores read as '-'.
std::string normalise(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '_') c = '-';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

Device parse_device(const json& d) {
  Device dev;
  dev.id = d.at("id").get<std::string>();
  dev.name = d.at("name").get<std::string>();
  dev.kind = kind_from(d.at("kind").get<std::string>());
  if (d.contains("total_gb")) {
    dev.capacity_bytes = std::llround(d.at("total_gb").get<double>() * static_cast<double>(kGB));
  } else {
    dev.capacity_bytes = d.at("total_mib").get<std::int64_t>() * kMiB;
  }
  if (d.contains("reserve_mib")) {
    dev.reserve_bytes = d.at("reserve_mib").get<std::int64_t>() * kMiB;
    dev.reserve_rule = "reserve_mib in the database";
  } else if (d.contains("reserve_gb")) {
    dev.reserve_bytes = std::llround(d.at("reserve_gb").get<double>() * static_cast<double>(kGB));
    dev.reserve_rule =
        fmt::format("{:g} GB kept back, as the seeds do", d.at("reserve_gb").get<double>());
  } else if (d.contains("gpu_share")) {
    const double share = d.at("gpu_share").get<double>();
    // The working-set cap, rounded down to a MiB as iogpu.wired_limit_mb counts it.
    const std::int64_t cap =
        static_cast<std::int64_t>(static_cast<double>(dev.capacity_bytes) * share) / kMiB * kMiB;
    dev.reserve_bytes = dev.capacity_bytes - cap;
    dev.reserve_rule = fmt::format(
        "GPU working-set cap ~{:.0f}% of RAM (recommendedMaxWorkingSetSize); the rest "
        "is the OS's",
        share * 100);
  } else if (dev.kind == DeviceKind::gpu) {
    dev.reserve_bytes = default_gpu_reserve(dev.capacity_bytes);
    dev.reserve_rule = "max(1 GiB, 2%): driver hold, CUDA context, allocator slack";
  }
  dev.bf16 = d.value("bf16", true);
  dev.compute_capability = d.value("compute_capability", std::string());
  if (d.contains("aliases")) dev.aliases = d.at("aliases").get<std::vector<std::string>>();
  dev.note = d.value("note", std::string());
  return dev;
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

std::vector<Device> list_devices() {
  std::vector<Device> out;
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path.rfind("devices/", 0) != 0) continue;
    const json j = json::parse(f.contents);  // our own data, checked by a test
    for (const json& d : j.at("devices")) out.push_back(parse_device(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const Device& a, const Device& b) {
    if (a.capacity_bytes != b.capacity_bytes) return a.capacity_bytes < b.capacity_bytes;
    return a.id < b.id;
  });
  return out;
}

std::vector<std::string> nearest_devices(std::string_view name, std::size_t n) {
  const std::string key = normalise(name);
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
  const std::string key = normalise(id);
  std::vector<Device> all = list_devices();
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
    if (d.kind == DeviceKind::gpu && normalise(d.name) == key) return d;
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

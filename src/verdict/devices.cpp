// The device database, embedded from data/devices/*.json.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
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

// A device by id, alias, or the name nvidia-smi --query-gpu=name prints ("NVIDIA GeForce RTX
// 4090"); `key` is normalised.
const Device* find_exact(const std::string& key, const std::vector<Device>& all) {
  for (const Device& d : all) {
    if (d.id == key) return &d;
  }
  for (const Device& d : all) {
    for (const std::string& a : d.aliases) {
      if (a == key) return &d;
    }
  }
  for (const Device& d : all) {
    if (d.kind == DeviceKind::gpu && io::normalise_device_name(d.name) == key) return &d;
  }
  return nullptr;
}

// The rows of a card nvidia-smi names the same in several memory sizes ("NVIDIA GeForce RTX 3080":
// 10 GB and 12 GB); such rows carry the size in parentheses: "NVIDIA GeForce RTX 3080 (12 GB)".
std::vector<const Device*> rows_sold_in_sizes(const std::string& key,
                                              const std::vector<Device>& all) {
  std::vector<const Device*> out;
  for (const Device& d : all) {
    const auto open = d.name.find(" (");
    const auto close = d.name.rfind(')');
    if (d.kind == DeviceKind::gpu && open != std::string::npos && close != std::string::npos &&
        close > open && io::normalise_device_name(d.name.substr(0, open)) == key) {
      out.push_back(&d);
    }
  }
  return out;
}

// "h100-80gb", "RTX 4090 24GB": a known name followed by a size in GB. Returns the name and the
// size, or nothing when `key` does not end in "-<digits>gb".
std::optional<std::pair<std::string, std::int64_t>> split_size_suffix(const std::string& key) {
  const std::string unit = "gb";
  if (key.size() < unit.size() + 3 || key.compare(key.size() - unit.size(), unit.size(), unit)) {
    return std::nullopt;
  }
  const std::size_t digits_end = key.size() - unit.size();
  std::size_t digits_begin = digits_end;
  while (digits_begin > 0 && std::isdigit(static_cast<unsigned char>(key[digits_begin - 1]))) {
    --digits_begin;
  }
  const std::size_t n_digits = digits_end - digits_begin;
  if (n_digits == 0 || n_digits > 4 || digits_begin < 2 || key[digits_begin - 1] != '-') {
    return std::nullopt;
  }
  return std::make_pair(key.substr(0, digits_begin - 1),
                        std::stoll(key.substr(digits_begin, n_digits)));
}

// Whether `size_gb`, as a user writes a card's memory, names `capacity_bytes`: vendors and
// drivers give it as GiB (nvidia-smi's MiB / 1024: "24GB" for the RTX 4090's 23.99 GiB, "141GB"
// for the H200's 140.4 GiB) or as decimal GB (the B200's "192GB" is 179 GiB), so either reading
// within 5 % counts.
bool size_names_capacity(std::int64_t size_gb, std::int64_t capacity_bytes) {
  const auto close = [&](double unit) {
    const double capacity = static_cast<double>(capacity_bytes) / unit;
    return std::abs(capacity - static_cast<double>(size_gb)) <= 0.05 * static_cast<double>(size_gb);
  };
  return close(static_cast<double>(kGiB)) || close(static_cast<double>(kGB));
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
  if (const Device* d = find_exact(key, all)) return *d;
  // A known name with its memory size: the size must be the device's, so that "rtx-4090-48gb" (a
  // modified card) or "h100-94gb" (the NVL) is refused rather than priced at the wrong capacity.
  if (const auto sized_name = split_size_suffix(key)) {
    const auto& [name, size_gb] = *sized_name;
    const Device* exact = find_exact(name, all);
    const std::vector<const Device*> candidates =
        exact ? std::vector<const Device*>{exact} : rows_sold_in_sizes(name, all);
    std::string sizes;
    for (const Device* d : candidates) {
      if (size_names_capacity(size_gb, d->capacity_bytes)) return *d;
      sizes += fmt::format("{}{} ({}: {:.2f} GiB, {:.0f} GB)", sizes.empty() ? "" : ", ", d->id,
                           d->name, static_cast<double>(d->capacity_bytes) / kGiB,
                           static_cast<double>(d->capacity_bytes) / kGB);
    }
    if (!sizes.empty()) {
      return Error{ErrorCode::not_found, "", "device",
                   fmt::format("'{}': no {} GB device of that name; known: {}; give the id of "
                               "yours (trainmem gpus lists them), or --memory NMiB with the N that "
                               "nvidia-smi --query-gpu=memory.total prints",
                               id, size_gb, sizes)};
    }
  }
  // nvidia-smi prints one name for a card sold in several memory sizes: the bare name is refused
  // rather than priced against a capacity that may not be the user's.
  std::string sized;
  for (const Device* d : rows_sold_in_sizes(key, all)) {
    const auto open = d->name.find(" (");
    sized += fmt::format("{}{} ({})", sized.empty() ? "" : ", ", d->id,
                         d->name.substr(open + 2, d->name.rfind(')') - open - 2));
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

Result<Device> with_reserve(Device device, std::int64_t bytes) {
  device.reserve_bytes = bytes;
  device.reserve_rule = "--reserve";
  if (device.usable_bytes() <= 0) {
    return Error{
        ErrorCode::usage, "", "--reserve",
        fmt::format("{} leaves nothing of the device's {}: the usable budget must be "
                    "positive",
                    format_bytes(bytes, Unit::gb), format_bytes(device.capacity_bytes, Unit::gb))};
  }
  return device;
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

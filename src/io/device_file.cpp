// Device rows and device files. The built-in database (data/devices/*.json) and a user's file are
// read by the same checks, so a user row means what a built-in row means: capacity as the driver
// reports it (nvidia-smi memory.total in MiB, or decimal GB), an optional reserve, bf16 support.
#include "io/device_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>

#include "io/json_parse.h"
#include "io/read_file.h"
#include "trainmem/render.h"
#include "util/edit_distance.h"
#include "util/json_text.h"

namespace trainmem {
namespace io {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 11> kFields = {
    "id",         "name",      "kind", "total_mib", "total_gb",          "reserve_mib",
    "reserve_gb", "gpu_share", "bf16", "aliases",   "compute_capability"};
constexpr std::string_view kNoteField = "note";

// The largest capacity a row may state: 1 PiB, far past any device, far below int64 bytes.
constexpr std::int64_t kMaxMib = std::int64_t{1} << 30;
constexpr double kMaxGb = 1e6;
constexpr std::size_t kMaxRows = 10'000;
constexpr std::size_t kMaxText = 200;   // id, name, alias, compute_capability lengths
constexpr std::size_t kMaxNote = 2000;  // a note cites its sources

std::string field_list() {
  std::string out;
  for (std::string_view f : kFields) out += (out.empty() ? "" : ", ") + std::string(f);
  return out + ", " + std::string(kNoteField);
}

// What the flash-attention check (plan_notes) reads: a CUDA compute capability, major.minor as
// nvidia-smi --query-gpu=compute_cap prints it, or an AMD gfx architecture name (rocminfo).
bool compute_capability_ok(const std::string& cc) {
  auto digits = [](std::string_view s, bool hex) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [hex](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) ||
             (hex && std::isxdigit(static_cast<unsigned char>(c)));
    });
  };
  if (cc.rfind("gfx", 0) == 0) return digits(std::string_view(cc).substr(3), true);
  const auto dot = cc.find('.');
  return dot != std::string::npos && digits(std::string_view(cc).substr(0, dot), false) &&
         digits(std::string_view(cc).substr(dot + 1), false);
}

bool known_field(std::string_view key) {
  return key == kNoteField || std::find(kFields.begin(), kFields.end(), key) != kFields.end();
}

std::string nearest_field(std::string_view key) {
  std::string best;
  std::size_t best_distance = 4;  // near misses only
  for (std::string_view f : kFields) {
    const std::size_t d = edit_distance(key, f);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(f);
    }
  }
  return best;
}

struct Row {
  const json& j;
  const std::string& file;
  const std::string& field;

  std::string path(std::string_view key) const { return fmt::format("{}.{}", field, key); }
  Error error(std::string_view key, std::string reason) const {
    return bad_input(file, path(key), std::move(reason));
  }

  Result<std::string> text(std::string_view key, bool required,
                           std::size_t limit = kMaxText) const {
    const std::string k(key);
    if (!j.contains(k) || j[k].is_null()) {
      if (required) return error(key, "is missing");
      return std::string();
    }
    if (!j[k].is_string()) {
      return error(key, fmt::format("must be a string, got {}", json_excerpt(j[k])));
    }
    std::string s = j[k].get<std::string>();
    if (s.size() > limit) {
      return error(key, fmt::format("is {} characters; at most {}", s.size(), limit));
    }
    if (required && s.find_first_not_of(" \t") == std::string::npos) {
      return error(key, "is empty");
    }
    return s;
  }

  // A whole number in [lo, hi]; nullopt when absent.
  Result<std::optional<std::int64_t>> whole(std::string_view key, std::int64_t lo, std::int64_t hi,
                                            std::string_view what) const {
    const std::string k(key);
    if (!j.contains(k) || j[k].is_null()) return std::optional<std::int64_t>();
    const json& v = j[k];
    const bool in_range =
        (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
         static_cast<std::int64_t>(v.get<std::uint64_t>()) >= lo) ||
        (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() >= lo &&
         v.get<std::int64_t>() <= hi);
    if (!in_range) {
      return error(key, fmt::format("must be a whole number of {} from {} to {}, got {}", what, lo,
                                    hi, json_excerpt(v)));
    }
    return std::optional<std::int64_t>(v.get<std::int64_t>());
  }

  // A number in (lo, hi] (lo itself when `closed`); nullopt when absent.
  Result<std::optional<double>> number(std::string_view key, double lo, double hi, bool closed,
                                       std::string_view what) const {
    const std::string k(key);
    if (!j.contains(k) || j[k].is_null()) return std::optional<double>();
    const json& v = j[k];
    const double x = v.is_number() ? v.get<double>() : std::nan("");
    const bool ok = v.is_number() && std::isfinite(x) && (closed ? x >= lo : x > lo) && x <= hi;
    if (!ok) {
      return error(key, fmt::format("must be {} {} {:g} and at most {:g}, got {}", what,
                                    closed ? "at least" : "above", lo, hi, json_excerpt(v)));
    }
    return std::optional<double>(x);
  }
};

std::optional<DeviceKind> parse_kind(std::string_view s) {
  if (s == "gpu") return DeviceKind::gpu;
  if (s == "unified") return DeviceKind::unified;
  if (s == "tier") return DeviceKind::tier;
  return std::nullopt;
}

}  // namespace

std::string normalise_device_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '_') c = '-';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

Result<Device> device_from_json(const json& j, const std::string& file, const std::string& field) {
  if (!j.is_object()) {
    return bad_input(file, field,
                     fmt::format("must be an object such as {{\"id\": \"my-gpu\", \"total_mib\": "
                                 "24576}}, got {}",
                                 json_excerpt(j)));
  }
  const Row r{j, file, field};
  // Every key is one trainmem reads: a misspelt capacity must not fall back to a default.
  for (const auto& [key, value] : j.items()) {
    if (key.rfind('_', 0) == 0 || known_field(key)) continue;  // "_comment" keys are notes
    const std::string near = nearest_field(key);
    return r.error(text_excerpt(key, 40),
                   fmt::format("is not a device field{}; fields: {}",
                               near.empty() ? "" : "; did you mean " + near + "?", field_list()));
  }
  Device dev;
  auto id = r.text("id", true);
  if (!id) return id.error();
  dev.id = normalise_device_name(id.value());
  auto name = r.text("name", false);
  if (!name) return name.error();
  dev.name = name->empty() ? id.value() : name.value();
  auto kind = r.text("kind", false);
  if (!kind) return kind.error();
  if (kind->empty()) {
    dev.kind = DeviceKind::gpu;
  } else if (auto k = parse_kind(kind.value())) {
    dev.kind = *k;
  } else {
    return r.error("kind", fmt::format("'{}' is not one of: gpu, unified, tier",
                                       text_excerpt(kind.value(), 40)));
  }

  auto mib = r.whole("total_mib", 1, kMaxMib, "MiB (nvidia-smi memory.total)");
  if (!mib) return mib.error();
  auto gb = r.number("total_gb", 0, kMaxGb, false, "decimal GB");
  if (!gb) return gb.error();
  if (mib->has_value() == gb->has_value()) {
    return r.error("total_mib", mib->has_value()
                                    ? "give total_mib or total_gb, not both"
                                    : "is missing: give the capacity as total_mib (what "
                                      "nvidia-smi --query-gpu=memory.total prints) or total_gb");
  }
  dev.capacity_bytes =
      mib->has_value() ? **mib * kMiB : std::llround(**gb * static_cast<double>(kGB));
  if (dev.capacity_bytes < kMiB) return r.error("total_gb", "is below 1 MiB");

  auto reserve_mib = r.whole("reserve_mib", 0, kMaxMib, "MiB");
  if (!reserve_mib) return reserve_mib.error();
  auto reserve_gb = r.number("reserve_gb", 0, kMaxGb, true, "decimal GB");
  if (!reserve_gb) return reserve_gb.error();
  auto share = r.number("gpu_share", 0, 1, false, "a fraction of RAM");
  if (!share) return share.error();
  const int reserves = reserve_mib->has_value() + reserve_gb->has_value() + share->has_value();
  if (reserves > 1) {
    return r.error("reserve_mib", "give one of reserve_mib, reserve_gb, gpu_share");
  }
  std::string reserve_key = "reserve_mib";
  if (reserve_mib->has_value()) {
    dev.reserve_bytes = **reserve_mib * kMiB;
    dev.reserve_rule = "reserve_mib in the database";
  } else if (reserve_gb->has_value()) {
    reserve_key = "reserve_gb";
    dev.reserve_bytes = std::llround(**reserve_gb * static_cast<double>(kGB));
    dev.reserve_rule = fmt::format("{:g} GB kept back, as the seeds do", **reserve_gb);
  } else if (share->has_value()) {
    reserve_key = "gpu_share";
    // The working-set cap, rounded down to a MiB as iogpu.wired_limit_mb counts it.
    const std::int64_t cap =
        static_cast<std::int64_t>(static_cast<double>(dev.capacity_bytes) * **share) / kMiB * kMiB;
    dev.reserve_bytes = dev.capacity_bytes - cap;
    dev.reserve_rule = fmt::format(
        "GPU working-set cap ~{:.0f}% of RAM (recommendedMaxWorkingSetSize); the rest "
        "is the OS's",
        **share * 100);
  } else if (dev.kind == DeviceKind::gpu) {
    dev.reserve_bytes = default_gpu_reserve(dev.capacity_bytes);
    dev.reserve_rule = "max(1 GiB, 2%): driver hold and margin";
  }
  if (dev.usable_bytes() <= 0) {
    return r.error(reserve_key,
                   fmt::format("keeps back {} of the device's {}: nothing is left to use",
                               format_bytes(dev.reserve_bytes, Unit::mib),
                               format_bytes(dev.capacity_bytes, Unit::mib)));
  }

  if (j.contains("bf16") && !j["bf16"].is_null()) {
    if (!j["bf16"].is_boolean()) {
      return r.error("bf16", fmt::format("must be true or false (native bf16: compute capability "
                                         ">= 8.0), got {}",
                                         json_excerpt(j["bf16"])));
    }
    dev.bf16 = j["bf16"].get<bool>();
  }
  auto cc = r.text("compute_capability", false);
  if (!cc) return cc.error();
  if (!cc->empty() && !compute_capability_ok(*cc)) {
    return r.error("compute_capability",
                   fmt::format("must be a CUDA compute capability such as \"8.9\" or an AMD "
                               "architecture such as \"gfx942\", got \"{}\"",
                               text_excerpt(*cc, 40)));
  }
  dev.compute_capability = cc.value();
  if (j.contains("aliases") && !j["aliases"].is_null()) {
    const json& a = j["aliases"];
    if (!a.is_array()) {
      return r.error("aliases", fmt::format("must be a list of names, got {}", json_excerpt(a)));
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string at = fmt::format("aliases[{}]", i);
      if (!a[i].is_string() || a[i].get<std::string>().empty() ||
          a[i].get<std::string>().size() > kMaxText) {
        return r.error(at, fmt::format("must be a non-empty name of at most {} characters, got {}",
                                       kMaxText, json_excerpt(a[i])));
      }
      dev.aliases.push_back(normalise_device_name(a[i].get<std::string>()));
    }
  }
  auto note = r.text("note", false, kMaxNote);
  if (!note) return note.error();
  dev.note = note.value();
  return dev;
}

}  // namespace io

Result<std::vector<Device>> parse_device_file(std::string_view text, const std::string& file) {
  auto parsed = io::parse_json(text, file);
  if (!parsed) return parsed.error();
  const nlohmann::json& root = parsed.value();
  const nlohmann::json* rows = &root;
  std::string prefix;
  if (root.is_object()) {
    if (!root.contains("devices")) {
      return bad_input(file, "devices",
                       "is missing: a device file is {\"devices\": [{\"id\": ..., \"total_mib\": "
                       "...}, ...]}, as data/devices/gpus.json");
    }
    rows = &root["devices"];
    prefix = "devices";
  }
  if (!rows->is_array()) {
    return bad_input(file, prefix,
                     fmt::format("must be a list of devices, got {}", json_excerpt(*rows)));
  }
  if (rows->empty()) return bad_input(file, prefix, "lists no devices");
  if (rows->size() > io::kMaxRows) {
    return bad_input(file, prefix,
                     fmt::format("lists {} devices; at most {}", rows->size(), io::kMaxRows));
  }
  std::vector<Device> out;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const std::string field = fmt::format("{}[{}]", prefix, i);
    auto d = io::device_from_json((*rows)[i], file, field);
    if (!d) return d.error();
    if (auto it = seen.find(d->id); it != seen.end()) {
      return bad_input(file, field + ".id",
                       fmt::format("'{}' is also the id of {}[{}]: each id names one device", d->id,
                                   prefix, it->second));
    }
    seen.emplace(d->id, i);
    out.push_back(std::move(d).value());
  }
  return out;
}

Result<std::vector<Device>> read_device_file(const std::string& path) {
  auto text = io::read_regular_file(path, io::kMaxConfigBytes, "a device file");
  if (!text) return text.error();
  auto devices = parse_device_file(text.value(), path);
  if (!devices) return devices.error();
  for (Device& d : devices.value()) {
    d.note = d.note.empty() ? "from " + path : d.note + " (from " + path + ")";
  }
  return devices;
}

}  // namespace trainmem

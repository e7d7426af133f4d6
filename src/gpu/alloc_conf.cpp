// PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF parsing: comma-separated key:value pairs, as
// PyTorch's ConfigTokenizer reads them (c10/core/AllocatorConfig.cpp for the device-generic keys,
// c10/cuda/CUDAAllocatorConfig.cpp for the CUDA ones; the keys and limits of torch 2.15). The
// checks and their limits are PyTorch's own.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "gpu/caching_allocator.h"
#include "trainmem/device.h"

namespace trainmem::gpu {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

bool is_pow2(std::int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

int log2_floor(std::int64_t v) {
  int r = 0;
  while (v > 1) {
    v >>= 1;
    ++r;
  }
  return r;
}

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_double(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// Splits at commas outside [ ].
std::vector<std::string> split_top(std::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

// roundup_power2_divisions:N or [256:1,512:2,>:8] (sizes in MiB, powers of two; values powers
// of two or 0). The first entry covers every interval up to its own; ">" the rest.
std::optional<std::string> parse_divisions(const std::string& value,
                                           std::vector<std::int64_t>& out) {
  auto check = [](std::int64_t d) -> std::optional<std::string> {
    if (d != 0 && !is_pow2(d)) {
      return fmt::format("divisions must be a power of 2 or 0, got {}", d);
    }
    return std::nullopt;
  };
  if (value.empty() || value.front() != '[') {
    const auto n = to_int(value);
    if (!n || *n < 0)
      return fmt::format("expected a count or a [size:count,...] list, got '{}'", value);
    if (auto e = check(*n)) return e;
    std::fill(out.begin(), out.end(), *n);
    return std::nullopt;
  }
  if (value.back() != ']') return "a list must end with ']'";
  const std::string inner = value.substr(1, value.size() - 2);
  bool first = true;
  int last = 0;
  for (const std::string& entry : split_top(inner)) {
    const auto colon = entry.find(':');
    if (colon == std::string::npos) return fmt::format("list entry '{}' is not size:count", entry);
    const std::string key = trim(std::string_view(entry).substr(0, colon));
    const auto div = to_int(trim(std::string_view(entry).substr(colon + 1)));
    if (!div || *div < 0) return fmt::format("list entry '{}' has a bad count", entry);
    if (auto e = check(*div)) return e;
    if (key == ">") {
      std::fill(out.begin() + (first ? 0 : last + 1), out.end(), *div);
      first = false;
      continue;
    }
    const auto mb = to_int(key);
    if (!mb || !is_pow2(*mb)) {
      return fmt::format("list size '{}' must be a power of 2 (MiB) or '>'", key);
    }
    const int index = std::min(log2_floor(*mb), kRoundUpPowerOfTwoIntervals - 1);
    if (!first && index <= last) return "list sizes must increase";
    std::fill(out.begin() + (first ? 0 : last + 1), out.begin() + index + 1, *div);
    last = index;
    first = false;
  }
  return std::nullopt;
}

std::optional<bool> to_bool(const std::string& v) {
  // ConfigTokenizer::toBool accepts exactly True and False.
  if (v == "True") return true;
  if (v == "False") return false;
  return std::nullopt;
}

// 1 TiB: no device has more memory than that for one segment.
constexpr std::int64_t kLargestSegmentMiB = std::int64_t{1} << 20;

}  // namespace

Result<AllocatorConfig> parse_alloc_conf(std::string_view text, std::string_view field) {
  AllocatorConfig c;
  c.text = trim(text);
  if (c.text.empty()) return c;
  auto fail = [&](const std::string& key, const std::string& reason) {
    return Error{ErrorCode::bad_input, "", std::string(field),
                 key.empty() ? reason : fmt::format("'{}': {}", key, reason)};
  };
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& pair : split_top(c.text)) {
    if (pair.empty()) continue;
    const auto colon = pair.find(':');
    if (colon == std::string::npos) return fail(pair, "expected key:value");
    pairs.emplace_back(trim(std::string_view(pair).substr(0, colon)),
                       trim(std::string_view(pair).substr(colon + 1)));
  }
  // A size in MiB of at least `min_mb`, stored in bytes (AllocatorConfig.cpp clamps at the
  // largest size_t in MiB); `bound` is PyTorch's wording of the limit.
  auto mebibytes = [&](const std::string& key, const std::string& value, std::int64_t min_mb,
                       const std::string& bound) -> Result<std::int64_t> {
    const auto mb = to_int(value);
    if (!mb) return fail(key, fmt::format("expected an integer (MiB), got '{}'", value));
    if (*mb < min_mb) return fail(key, "too small, must be " + bound);
    return *mb > kUnlimited / kMiB ? kUnlimited : *mb * kMiB;
  };
  // AcceleratorAllocatorConfig::parseArgs reads large_segment_size_mb first (> 10 MiB,
  // kMinLargeAlloc): it is the default of max_non_split_rounding_mb and the least
  // max_split_size_mb and max_non_split_rounding_mb accept.
  for (const auto& [key, value] : pairs) {
    if (key != "large_segment_size_mb") continue;
    auto bytes = mebibytes(key, value, kMinLargeAlloc / kMiB + 1,
                           fmt::format("> {}", kMinLargeAlloc / kMiB));
    if (!bytes) return bytes.error();
    // PyTorch takes any size and cudaMalloc then fails; a segment larger than any device is
    // refused here, which also keeps the replay's byte counts from overflowing.
    if (*bytes > kLargestSegmentMiB * kMiB) {
      return fail(key, fmt::format("larger than any device, must be <= {}", kLargestSegmentMiB));
    }
    c.large_segment_size_bytes = *bytes;
  }
  c.max_non_split_rounding_bytes = c.large_segment_size_bytes;
  const std::int64_t least_mb = c.large_segment_size_bytes / kMiB;
  for (const auto& [key, value] : pairs) {
    if (key == "large_segment_size_mb") {
      continue;
    } else if (key == "max_split_size_mb" || key == "max_non_split_rounding_mb") {
      auto bytes = mebibytes(key, value, least_mb, fmt::format(">= {}", least_mb));
      if (!bytes) return bytes.error();
      (key == "max_split_size_mb" ? c.max_split_size_bytes : c.max_non_split_rounding_bytes) =
          *bytes;
    } else if (key == "garbage_collection_threshold") {
      const auto t = to_double(value);
      if (!t) return fail(key, fmt::format("expected a number, got '{}'", value));
      if (*t <= 0.0 || *t >= 1.0) return fail(key, "must be between 0.0 and 1.0 (exclusive)");
      c.garbage_collection_threshold = *t;
    } else if (key == "expandable_segments") {
      const auto b = to_bool(value);
      if (!b) return fail(key, fmt::format("expected True or False, got '{}'", value));
      c.expandable_segments = *b;
    } else if (key == "roundup_power2_divisions") {
      if (auto e = parse_divisions(value, c.roundup_power2_divisions)) return fail(key, *e);
    } else if (key == "backend") {
      if (value != "native" && value != "cudaMallocAsync") {
        return fail(key, fmt::format("expected native or cudaMallocAsync, got '{}'", value));
      }
      c.async_backend = value == "cudaMallocAsync";
    } else if (key == "per_process_memory_fraction") {
      const auto f = to_double(value);
      if (!f || *f < 0.0 || *f > 1.0) return fail(key, "expected a number in [0, 1]");
      c.per_process_memory_fraction = *f;
    } else if (key == "release_lock_on_cudamalloc" || key == "pinned_use_cuda_host_register" ||
               key == "graph_capture_record_stream_reuse" ||
               key == "pinned_use_background_threads" || key == "pinned_free_catch_all" ||
               key == "throw_on_cudamalloc_oom") {
      // Locking, host (pinned) memory and when an OOM is raised: no effect on the device
      // memory modelled.
      if (!to_bool(value)) return fail(key, fmt::format("expected True or False, got '{}'", value));
    } else if (key == "pinned_num_register_threads" || key == "pinned_reserve_segment_size_mb" ||
               key == "pinned_max_round_threshold_mb" || key == "pinned_max_cached_size_mb") {
      const auto n = to_int(value);
      if (!n || *n <= 0)
        return fail(key, fmt::format("expected a positive integer, got '{}'", value));
    } else if (key == "expandable_segments_reserve" ||
               key == "expandable_segments_reserve_by_class") {
      // Virtual address space an expandable segment reserves (CUDAAllocatorConfig.h
      // ExpandableSegmentReserveSpec), not memory: accepted, its value not checked.
      if (value.empty()) return fail(key, "expected a value");
    } else {
      return fail(key,
                  "unknown key (known: max_split_size_mb, max_non_split_rounding_mb, "
                  "large_segment_size_mb, garbage_collection_threshold, expandable_segments, "
                  "roundup_power2_divisions, backend, per_process_memory_fraction, "
                  "release_lock_on_cudamalloc, throw_on_cudamalloc_oom, "
                  "expandable_segments_reserve*, pinned_*)");
    }
  }
  for (std::int64_t d : c.roundup_power2_divisions) c.any_roundup_divisions |= d > 1;
  return c;
}

}  // namespace trainmem::gpu

namespace trainmem {

std::optional<AllocConfVariable> alloc_conf_from_environment(EnvironmentLookup lookup) {
  if (lookup == nullptr) lookup = [](const char* name) -> const char* { return std::getenv(name); };
  for (const char* name : {"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"}) {
    if (const char* value = lookup(name)) return AllocConfVariable{name, value};
  }
  return std::nullopt;
}

}  // namespace trainmem

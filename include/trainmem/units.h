// Units for display and for sizes the user types. Bytes are always 64-bit integers; a unit only
// changes how a number is printed. GiB by default, because devices and PyTorch report GiB.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trainmem/errors.h"

namespace trainmem {

enum class Unit { gib, gb, mib, bytes };

inline constexpr std::int64_t kGiB = std::int64_t{1} << 30;
inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;
inline constexpr std::int64_t kGB = 1'000'000'000;

std::optional<Unit> parse_unit(std::string_view s);
std::string_view unit_name(Unit u);  // "GiB", "GB", "MiB", "bytes"

// "24.64 GB", "22.95 GiB", "1,234 bytes".
std::string format_bytes(std::int64_t bytes, Unit unit, int decimals = 2);
// A bare number in the unit, no suffix.
double in_unit(std::int64_t bytes, Unit unit);
// "1,543,714,304"
std::string with_commas(std::int64_t n);
// "1.54B", "43.6M"
std::string short_count(std::int64_t n);

// "32GB", "24GiB", "24 GiB", "80000MiB", "1e9" (bytes). `field` names the flag in errors.
Result<std::int64_t> parse_size(std::string_view text, const std::string& field);
// "1.54e9", "8.2B", "43.7M", "124000000". `field` names the flag in errors.
Result<std::int64_t> parse_count(std::string_view text, const std::string& field);

}  // namespace trainmem

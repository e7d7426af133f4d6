#include "util/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <locale>
#include <sstream>
#include <string>

#include "trainmem/render.h"

namespace trainmem {

std::optional<Unit> parse_unit(std::string_view s) {
  if (s == "gib" || s == "GiB") return Unit::gib;
  if (s == "gb" || s == "GB") return Unit::gb;
  if (s == "mib" || s == "MiB") return Unit::mib;
  if (s == "bytes" || s == "b" || s == "B") return Unit::bytes;
  return std::nullopt;
}

std::string_view unit_name(Unit u) {
  switch (u) {
    case Unit::gib:
      return "GiB";
    case Unit::gb:
      return "GB";
    case Unit::mib:
      return "MiB";
    case Unit::bytes:
      return "bytes";
  }
  return "";
}

double in_unit(std::int64_t bytes, Unit unit) {
  switch (unit) {
    case Unit::gib:
      return static_cast<double>(bytes) / static_cast<double>(kGiB);
    case Unit::gb:
      return static_cast<double>(bytes) / static_cast<double>(kGB);
    case Unit::mib:
      return static_cast<double>(bytes) / static_cast<double>(kMiB);
    case Unit::bytes:
      return static_cast<double>(bytes);
  }
  return 0;
}

std::string with_commas(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string format_bytes(std::int64_t bytes, Unit unit, int decimals) {
  if (unit == Unit::bytes) return with_commas(bytes) + " bytes";
  return fmt::format("{:.{}f} {}", in_unit(bytes, unit), decimals, unit_name(unit));
}

std::string short_count(std::int64_t n) {
  const double v = static_cast<double>(n);
  if (std::abs(v) >= 1e9) return fmt::format("{:.2f}B", v / 1e9);
  if (std::abs(v) >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (std::abs(v) >= 1e3) return fmt::format("{:.1f}K", v / 1e3);
  return std::to_string(n);
}

namespace {

// The whole of `text` as a decimal number, independent of the locale. libc++ before LLVM 20 (that
// of Debian's emscripten 3.1.6, which builds the web page) has no floating-point std::from_chars;
// there the classic-locale stream reads the same characters (split_number admits only digits, '.',
// 'e' and '+').
bool parse_decimal(std::string_view text, double& value) {
#if defined(__cpp_lib_to_chars)
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
#else
  std::istringstream in{std::string(text)};
  in.imbue(std::locale::classic());
  in >> value;
  return !in.fail() && in.peek() == std::char_traits<char>::eof();
#endif
}

// Splits "32GB" into 32 and "GB"; accepts "1.5e9", spaces before the suffix, and commas.
Result<std::pair<double, std::string>> split_number(std::string_view text,
                                                    const std::string& field) {
  std::string clean;
  for (char c : text) {
    if (c != ',' && c != '_' && c != ' ') clean += c;
  }
  std::size_t end = 0;
  while (end < clean.size() &&
         (std::isdigit(static_cast<unsigned char>(clean[end])) || clean[end] == '.' ||
          ((clean[end] == 'e' || clean[end] == 'E') && end + 1 < clean.size() &&
           (std::isdigit(static_cast<unsigned char>(clean[end + 1])) || clean[end + 1] == '+')) ||
          (clean[end] == '+' && end > 0))) {
    ++end;
  }
  double value = 0;
  if (end == 0 || !parse_decimal(std::string_view(clean).substr(0, end), value) ||
      !std::isfinite(value)) {
    return bad_input("", field, fmt::format("'{}' is not a number", text));
  }
  std::string suffix = clean.substr(end);
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::pair{value, suffix};
}

Result<std::int64_t> checked(double value, std::string_view text, const std::string& field) {
  if (value <= 0) return bad_input("", field, fmt::format("'{}' must be positive", text));
  if (value >= 9.0e18) return bad_input("", field, fmt::format("'{}' is too large", text));
  // Found by flags_fuzz: "0.4" passed "positive" and then rounded to 0.
  if (value < 0.5) {
    return bad_input("", field,
                     fmt::format("'{}' rounds to 0; give at least 1 (with a unit)", text));
  }
  return static_cast<std::int64_t>(std::llround(value));
}

}  // namespace

Result<std::int64_t> parse_size(std::string_view text, const std::string& field) {
  auto split = split_number(text, field);
  if (!split) return split.error();
  const auto& [value, suffix] = split.value();
  double scale = 0;
  if (suffix == "gib" || suffix == "g" || suffix == "gi")
    scale = static_cast<double>(kGiB);
  else if (suffix == "gb")
    scale = 1e9;
  else if (suffix == "mib" || suffix == "m" || suffix == "mi")
    scale = static_cast<double>(kMiB);
  else if (suffix == "mb")
    scale = 1e6;
  else if (suffix == "tib")
    scale = static_cast<double>(kGiB) * 1024;
  else if (suffix == "tb")
    scale = 1e12;
  else if (suffix == "b" || suffix == "bytes")
    scale = 1;
  else if (suffix.empty()) {
    // A bare number is ambiguous (24 bytes? 24 GB?); both readings of it are offered.
    return bad_input("", field,
                     fmt::format("'{}' needs a unit: {}GB (10^9 bytes) or {}GiB (2^30 bytes)", text,
                                 text, text));
  } else {
    return bad_input(
        "", field,
        fmt::format("'{}': unknown unit '{}' (use GiB, GB, MiB, MB or bytes)", text, suffix));
  }
  return checked(value * scale, text, field);
}

Result<std::int64_t> parse_count(std::string_view text, const std::string& field) {
  auto split = split_number(text, field);
  if (!split) return split.error();
  const auto& [value, suffix] = split.value();
  double scale = 0;
  if (suffix.empty())
    scale = 1;
  else if (suffix == "k")
    scale = 1e3;
  else if (suffix == "m")
    scale = 1e6;
  else if (suffix == "b" || suffix == "g")
    scale = 1e9;
  else if (suffix == "t")
    scale = 1e12;
  else
    return bad_input("", field,
                     fmt::format("'{}': unknown suffix '{}' (use K, M, B)", text, suffix));
  // A count is whole: "1.5" with no suffix is 1.5B (or M) with the suffix left off, not two.
  if (suffix.empty() && value != std::floor(value)) {
    return bad_input(
        "", field,
        fmt::format("'{}' is not a whole count; with a suffix, 1.5B is 1.5 billion", text));
  }
  return checked(value * scale, text, field);
}

}  // namespace trainmem

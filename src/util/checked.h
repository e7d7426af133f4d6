// Checked arithmetic for byte and element counts. Every count in trainmem is an int64; a product
// or sum that does not fit must never wrap into a small or negative number that then "fits".
// Two forms: checked_* return nullopt on overflow (for up-front checks that turn into an error),
// sat_* saturate at kSaturated (for the core, which has no error paths: a saturated figure stays
// saturated through later sums and products and is reported as overflow).
// Overflow detection: GCC/Clang __builtin_mul_overflow / __builtin_add_overflow.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>

namespace trainmem {

// The value a saturated figure holds: 2^63 - 1 bytes, just under 8 EiB.
inline constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

constexpr std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

constexpr std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Product of all factors, nullopt when any partial product overflows.
constexpr std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> xs) {
  std::int64_t r = 1;
  for (std::int64_t x : xs) {
    const auto next = checked_mul(r, x);
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

// Saturating forms for non-negative counts: a result past 2^63 - 1 (or an operand already
// saturated) gives kSaturated. Negative operands are a caller bug; they saturate too.
constexpr std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0) return kSaturated;
  if (a == 0 || b == 0) return 0;
  if (a == kSaturated || b == kSaturated) return kSaturated;
  return checked_mul(a, b).value_or(kSaturated);
}

constexpr std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0) return kSaturated;
  if (a == kSaturated || b == kSaturated) return kSaturated;
  return checked_add(a, b).value_or(kSaturated);
}

constexpr bool is_saturated(std::int64_t v) {
  return v == kSaturated;
}

}  // namespace trainmem

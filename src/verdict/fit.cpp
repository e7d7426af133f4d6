#include <fmt/format.h>

#include "trainmem/device.h"
#include "trainmem/render.h"
#include "util/checked.h"

namespace trainmem {

Fit fit(std::int64_t peak_bytes, const Device& device) {
  Fit f;
  f.device = device;
  f.capacity_bytes = device.capacity_bytes;
  f.reserve_bytes = device.reserve_bytes;
  f.usable_bytes = device.usable_bytes();
  f.peak_bytes = peak_bytes;
  // A saturated peak (more than 8 EiB) never fits, and its margin is not a number to subtract.
  const bool overflow = peak_bytes < 0 || is_saturated(peak_bytes);
  f.margin_bytes = overflow ? -kSaturated : f.usable_bytes - f.peak_bytes;
  f.fits = !overflow && f.margin_bytes >= 0;
  f.tight = f.fits && f.margin_bytes < kHeadroomAdviceBytes;
  f.used_fraction = f.usable_bytes > 0
                        ? static_cast<double>(f.peak_bytes) / static_cast<double>(f.usable_bytes)
                        : 0.0;
  return f;
}

Fit fit(const Totals& totals, const Device& device) {
  return fit(totals.overflow ? kSaturated : totals.peak_bytes, device);
}

std::string gb_and_gib(std::int64_t bytes) {
  return fmt::format("{} = {}", format_bytes(bytes, Unit::gb), format_bytes(bytes, Unit::gib));
}

}  // namespace trainmem

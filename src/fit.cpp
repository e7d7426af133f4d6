#include "trainmem/fit.h"

namespace trainmem {

Device custom_device(std::int64_t bytes) {
  Device d;
  d.id = "custom";
  d.name = "custom memory budget";
  d.kind = DeviceKind::custom;
  d.capacity_bytes = bytes;
  d.note = "--memory";
  return d;
}

Fit fit(const Totals& totals, const Device& device) {
  Fit f;
  f.device = device;
  f.capacity_bytes = device.capacity_bytes;
  f.reserve_bytes = device.reserve_bytes;
  f.usable_bytes = device.capacity_bytes - device.reserve_bytes;
  f.peak_bytes = totals.peak_bytes;
  f.margin_bytes = f.usable_bytes - f.peak_bytes;
  f.fits = f.margin_bytes >= 0;
  f.tight = f.fits && f.margin_bytes < kHeadroomAdviceBytes;
  return f;
}

}  // namespace trainmem

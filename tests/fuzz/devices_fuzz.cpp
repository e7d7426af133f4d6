// libFuzzer target for user device files (--devices FILE): any bytes either give a one-line error
// naming the file, or devices whose capacity, reserve and usable bytes are positive and consistent.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trainmem/device.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto devices = trainmem::parse_device_file(text, "fuzz/devices.json");
  if (!devices.ok()) {
    const trainmem::Error& e = devices.error();
    if (e.reason.empty() || e.file != "fuzz/devices.json" || e.message().size() > 1024) {
      __builtin_trap();
    }
    return 0;
  }
  for (const trainmem::Device& d : devices.value()) {
    if (d.id.empty() || d.capacity_bytes <= 0 || d.reserve_bytes < 0 || d.usable_bytes() <= 0 ||
        d.usable_bytes() > d.capacity_bytes) {
      __builtin_trap();
    }
  }
  return 0;
}

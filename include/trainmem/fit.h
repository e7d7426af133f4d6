// The verdict: does the plan's peak fit the device, and by how much.
#pragma once

#include <cstdint>
#include <string>

#include "trainmem/device.h"
#include "trainmem/ledger.h"

namespace trainmem {

// The seeds advise leaving 2 to 3 GB on top of any estimate.
inline constexpr std::int64_t kHeadroomAdviceBytes = 2'000'000'000;

struct Fit {
  Device device;
  std::int64_t capacity_bytes = 0;  // device capacity
  std::int64_t reserve_bytes = 0;   // kept back (OS, CUDA context, --reserve)
  std::int64_t usable_bytes = 0;    // capacity - reserve
  std::int64_t peak_bytes = 0;      // the plan's peak
  bool fits = false;                // peak <= usable
  std::int64_t margin_bytes = 0;    // usable - peak (negative: over budget)
  bool tight = false;               // fits, but with less than kHeadroomAdviceBytes to spare
  double used_fraction = 0;         // peak / usable
  // Which figure peak_bytes is: "peak" (live bytes, the ledger) or "device total" (nvidia-smi:
  // allocator reserve + CUDA context, trainmem/gpu.h).
  std::string figure = "peak";
};

Fit fit(const Totals& totals, const Device& device);
Fit fit(std::int64_t peak_bytes, const Device& device);

// "32.00 GB = 29.80 GiB": the same bytes in both units, so the GB/GiB clash is visible.
std::string gb_and_gib(std::int64_t bytes);

}  // namespace trainmem

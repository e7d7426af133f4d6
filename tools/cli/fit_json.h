// JSON for devices and verdicts, shared by gpus, solve, advise and sweep.
#pragma once

#include <nlohmann/json.hpp>

#include "trainmem/device.h"
#include "trainmem/fit.h"

namespace trainmem::cli {

inline nlohmann::json device_json(const Device& d) {
  return {{"id", d.id},
          {"name", d.name},
          {"kind", name_of(d.kind)},
          {"capacity_bytes", d.capacity_bytes},
          {"reserve_bytes", d.reserve_bytes},
          {"usable_bytes", d.usable_bytes()},
          {"bf16", d.bf16},
          {"compute_capability", d.compute_capability},
          {"reserve_rule", d.reserve_rule},
          {"aliases", d.aliases},
          {"note", d.note}};
}

inline nlohmann::json verdict_json(const Fit& f) {
  return {{"device", f.device.id},
          {"device_name", f.device.name},
          {"capacity_bytes", f.capacity_bytes},
          {"reserve_bytes", f.reserve_bytes},
          {"usable_bytes", f.usable_bytes},
          {"peak_bytes", f.peak_bytes},
          {"fits", f.fits},
          {"margin_bytes", f.margin_bytes},
          {"tight", f.tight}};
}

}  // namespace trainmem::cli

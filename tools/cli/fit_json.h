// JSON for devices, shared by gpus, solve, advise and sweep (verdicts: trainmem/json.h).
#pragma once

#include <nlohmann/json.hpp>

#include "trainmem/device.h"

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

}  // namespace trainmem::cli

// Measured training peaks (validation/data/*.jsonl, schema trainmem.measurement/1), as written by
// the PyTorch harness in validation/. Read by `trainmem validate`.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trainmem/result.h"

namespace trainmem {

struct MeasurementRecord {
  std::string id;
  std::string model;  // path of the config.json used (repo-relative), or a preset
  // The plan in trainmem's flag vocabulary: "batch" -> "2", "lora_targets" -> "q,v", ...
  std::map<std::string, std::string> plan;
  std::int64_t peak_bytes = 0;
  std::string peak_phase;                     // e.g. "backward"
  int peak_step = 0;                          // 1 = first step, 2 = steady state
  std::array<std::int64_t, 5> by_category{};  // kMeasuredCategories order (accuracy.h)
  std::string device;                         // "cpu", or a CUDA device name
  std::string tracker;  // "memtracker", "fake+memtracker", "cuda", "published", ...
  // What peak_bytes is: "" for a CPU trace of live tensors; on a GPU "max_memory_allocated",
  // "max_memory_reserved" or "nvidia-smi" (validate compares it with the matching figure).
  std::string metric;
  std::string device_id;  // a `trainmem gpus` id for the device, "" when unknown
  std::string source;     // who published the row (source.name), "" for our own measurements
};

// One record per non-empty line; an error names the file, the line and the field.
Result<std::vector<MeasurementRecord>> read_measurements(const std::string& path);

}  // namespace trainmem

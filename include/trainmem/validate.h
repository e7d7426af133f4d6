// Measured training peaks (validation/data/*.jsonl, schema trainmem.measurement/1), as written by
// the PyTorch harness in validation/. Read by `trainmem validate`.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trainmem/errors.h"

namespace trainmem {

struct MeasurementRecord {
  std::string id;
  std::string model;  // path of the config.json used (repo-relative), or a preset
  // The plan in trainmem's flag vocabulary: "batch" -> "2", "lora_targets" -> "q,v", ...
  std::map<std::string, std::string> plan;
  // config.layout: how the run was spread over ranks, in the layout flags' vocabulary
  // ("gpus" -> "2", "fsdp" -> "full", "fsdp_version" -> "2"); empty for a single-device run.
  // Multi-rank rows (validation/distributed.py) carry it; validate prices the same layout.
  std::map<std::string, std::string> layout;
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
  // measured.cuda_context of the harness's GPU rows: the name nvidia-smi prints for the device
  // ("NVIDIA H200") and the CUDA runtime of the torch build ("13.0"); "" when not recorded.
  std::string device_name;
  std::string cuda_version;
  std::string source;  // who published the row (source.name), "" for our own measurements
  // config.step_lengths: the padded length of each micro-batch of the run, in order, where the
  // source says what the run fed (e.g. litgpt 0.1 runs the longest sample first); empty: every
  // step at the plan's seq. validate then compares the figure of that run (GpuOptions).
  std::vector<std::int64_t> step_lengths;
};

// One record per non-empty line; an error names the file, the line and the field.
Result<std::vector<MeasurementRecord>> read_measurements(const std::string& path);

// Accuracy of the estimator against measured peaks: per-row errors and their summary statistics.
// Categories the measurement harness records (validation/), in the order records store them.
inline constexpr std::array<const char*, 5> kMeasuredCategories = {
    "parameters", "gradients", "optimizer", "activations", "other"};

// Categories compared, matched to our tenants: parameters = weights; gradients; optimizer =
// optimizer states + master weights; activations_and_other = activations + logits + temporaries.
// MemTracker files the loss's saved log-softmax under activations and its backward buffers under
// "other", while our logits tenant holds both, so only the sum of the two is comparable.
inline constexpr std::array<const char*, 4> kCompareCategories = {
    "parameters", "gradients", "optimizer", "activations_and_other"};

struct AccuracyRow {
  std::string id;
  std::int64_t measured_peak_bytes = 0;
  std::int64_t predicted_peak_bytes = 0;
  std::string measured_phase;
  std::string predicted_phase;
  std::array<std::int64_t, 4> measured_by_category{};  // kCompareCategories order
  std::array<std::int64_t, 4> predicted_by_category{};
  std::string family;  // the model's model_type, for per-family figures ("": not grouped)
  std::string metric;  // a GPU row's figure (max_memory_allocated, ...); "" for CPU traces
  std::string source;  // who published the row; "" for our own measurements
};

struct ErrorStats {
  std::size_t rows = 0;
  double median_abs_pct = 0;
  double p95_abs_pct = 0;  // nearest-rank 95th percentile
  double max_abs_pct = 0;
  double mean_signed_pct = 0;  // bias: positive means the estimator over-predicts
};

struct AccuracyReport {
  ErrorStats peak;
  std::array<ErrorStats, 4> by_category;  // rows where the measured category is non-zero
};

// Everything `trainmem validate` reports for one file of measurements.
struct ValidationReport {
  std::string file;
  std::vector<AccuracyRow> rows;
  AccuracyReport summary;
  std::vector<std::pair<std::string, ErrorStats>> by_family, by_metric, by_source;
};
ValidationReport validation_report(std::string file, std::vector<AccuracyRow> rows);

// The trainmem.validation/1 document (docs/formats.md), and the table the command line prints.
std::string render_validation_json(const ValidationReport& report);
std::string render_validation_text(const ValidationReport& report);

}  // namespace trainmem

// Devices and the verdict: the device database (and user device files), fit() of a peak against
// a device, and judge(), the one verdict of a plan on a device that every command uses.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/estimate.h"

namespace trainmem {

// Devices as data (data/devices/*.json): GPUs as their driver reports them, Apple unified-memory
// machines with the GPU working-set cap, and the seeds' memory tiers. docs/devices.md.

enum class DeviceKind { gpu, unified, tier, custom };
std::string_view name_of(DeviceKind k);  // "gpu", "unified", "tier", "custom"

// The default reserve of a GPU entry without its own reserve_mib: max(1 GiB, 2% of the total),
// for the driver's own hold, the CUDA context (300-700 MB) and the caching allocator's slack.
std::int64_t default_gpu_reserve(std::int64_t capacity_bytes);

struct Device {
  std::string id;    // lower-case, e.g. "rtx-4090", "m3-max-64gb", "tier-24gb"
  std::string name;  // "NVIDIA GeForce RTX 4090"
  DeviceKind kind = DeviceKind::custom;
  std::int64_t capacity_bytes = 0;  // what the driver reports (nvidia-smi MiB x 2^20), or RAM
  // Kept back before training can allocate: CUDA context + PyTorch reservation on a GPU, the
  // OS share (working-set cap) on unified memory. Overridden by --reserve.
  std::int64_t reserve_bytes = 0;
  bool bf16 = true;                // native bf16 (compute capability >= 8.0, or Apple M2 and later)
  std::string compute_capability;  // "8.9"; empty when not a CUDA device
  std::string reserve_rule;        // how reserve_bytes was set, in words
  std::vector<std::string> aliases;
  std::string note;  // where the figures come from

  std::int64_t usable_bytes() const { return capacity_bytes - reserve_bytes; }
};

// The database (data/devices/*.json, embedded) and any user devices, in the order of capacity.
std::vector<Device> list_devices();

// User device files (--devices FILE, TRAINMEM_DEVICES=FILE; docs/formats.md): {"devices": [...]}
// (or a bare list) of rows in the schema of data/devices/gpus.json. Every key is checked; an
// error names the file, the row and the field ("devices[2].total_mib").
Result<std::vector<Device>> parse_device_file(std::string_view text, const std::string& file);
Result<std::vector<Device>> read_device_file(const std::string& path);
// Adds `devices` to list_devices() and find_device() for the rest of the process; a row whose id
// is a built-in id replaces that device, and user aliases and names are matched first.
void use_user_devices(std::vector<Device> devices);
// A device by id, alias or the name nvidia-smi prints (case-insensitive; spaces and underscores
// read as '-'), optionally followed by its memory size ("h100-80gb"), which must be the card's;
// unknown ids suggest the nearest names.
Result<Device> find_device(std::string_view id);
// Up to `n` device ids nearest to `name` (edit distance; substrings first).
std::vector<std::string> nearest_devices(std::string_view name, std::size_t n = 3);

// A device of exactly `bytes` capacity (--memory), with no reserve unless --reserve is given.
Device custom_device(std::int64_t bytes);

// `device` with `bytes` kept back instead of its own reserve (--reserve SIZE): an error when that
// leaves no usable memory. The reserve's rule then reads "--reserve".
Result<Device> with_reserve(Device device, std::int64_t bytes);

// The verdict: does the plan's peak fit the device, and by how much.
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
  // allocator reserve + CUDA context, estimate.h: gpu_estimate).
  std::string figure = "peak";
};

Fit fit(const Totals& totals, const Device& device);
Fit fit(std::int64_t peak_bytes, const Device& device);

// "32.00 GB = 29.80 GiB": the same bytes in both units, so the GB/GiB clash is visible.
std::string gb_and_gib(std::int64_t bytes);

// Options for a device: its compute capability, and what a process may hold on it (usable).
GpuOptions gpu_options_for(const Device& device, std::string alloc_conf);
// The same with the plan's allocator configuration (TrainingPlan::alloc_conf); without a device,
// only that (no compute capability, no limit).
GpuOptions gpu_options_for(const std::optional<Device>& device, const TrainingPlan& plan);

// The allocator configuration a run started here would use, and the variable it came from:
// PYTORCH_ALLOC_CONF, which PyTorch reads first since 2.9, else PYTORCH_CUDA_ALLOC_CONF
// (c10/core/AllocatorConfig.cpp AcceleratorAllocatorConfig::instance()); none when neither is
// set. `lookup` is the environment (std::getenv when none is given), or any other set of
// variables (a launch script's assignments).
struct AllocConfVariable {
  std::string name;
  std::string value;
};
using EnvironmentLookup = std::function<const char*(const char* name)>;
std::optional<AllocConfVariable> alloc_conf_from_environment(EnvironmentLookup lookup = nullptr);

// The one verdict of a plan on a device: estimate, solve, advise, sweep, the web page and Python
// all judge with these. CUDA cards and --memory budgets are judged on the device total (the step
// replayed through PyTorch's caching allocator plus the CUDA context: what runs out first on a
// real card); Apple unified memory (no CUDA allocator) and the seeds' memory tiers (budgets of
// live bytes) on the ledger's peak. The textbook convention has no event stream: its peak.
Fit judge(const GpuEstimate& gpu, const Totals& totals, const Device& device);
// Replays the ledger when the device is judged on its total. Errors: a malformed alloc_conf.
Result<Fit> judge(const LoadedModel& model, const TrainingPlan& plan, const Ledger& ledger,
                  const Device& device, const GpuOptions& options);
// The same from the plan alone, with the plan's allocator settings (alloc_conf) for the device.
Fit judge(const LoadedModel& model, const TrainingPlan& plan, const Device& device);

}  // namespace trainmem

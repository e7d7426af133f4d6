// Renderings: plain functions from values to text, JSON and SVG (nothing prints or reads files),
// and the units sizes are printed and typed in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/errors.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "trainmem/solve.h"

namespace trainmem {

// Units for display and for sizes the user types. Bytes are always 64-bit integers; a unit only
// changes how a number is printed. GiB by default, because devices and PyTorch report GiB.

enum class Unit { gib, gb, mib, bytes };

inline constexpr std::int64_t kGiB = std::int64_t{1} << 30;
inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;
inline constexpr std::int64_t kGB = 1'000'000'000;

std::optional<Unit> parse_unit(std::string_view s);

// "24.64 GB", "22.95 GiB", "1,234 bytes".
std::string format_bytes(std::int64_t bytes, Unit unit, int decimals = 2);
// A bare number in the unit, no suffix.
double in_unit(std::int64_t bytes, Unit unit);
// "1,543,714,304"
std::string with_commas(std::int64_t n);
// "1.54B", "43.6M"
std::string short_count(std::int64_t n);

// "32GB", "24GiB", "24 GiB", "80000MiB", "1e9B" (bytes). A bare number is an error that shows
// both the GB and the GiB spelling. `field` names the flag in errors.
Result<std::int64_t> parse_size(std::string_view text, const std::string& field);
// "1.54e9", "8.2B", "43.7M", "124000000". `field` names the flag in errors.
Result<std::int64_t> parse_count(std::string_view text, const std::string& field);

// Renderers: plain functions from values to strings. No renderer prints or reads files.

struct RenderOptions {
  Unit unit = Unit::gib;
  int bar_width = 40;  // characters of the proportional bar in the text report
};

// The human report, shaped like the seeds' memory budget.
std::string render_text(const Ledger& ledger, const Fit* fit, const RenderOptions& options);
// The arithmetic behind every line (trainmem explain); with `gpu`, behind the GPU figures too
// (render_gpu_explain).
std::string render_explain(const Ledger& ledger, const RenderOptions& options,
                           const GpuEstimate* gpu = nullptr);
// Memory through one step: one row per phase slot with a bar and its tenants (--timeline).
std::string render_timeline(const Ledger& ledger, const RenderOptions& options);
// The trainmem.ledger/1 JSON document (docs/formats.md); with `gpu`, its "gpu" object too.
std::string render_json(const Ledger& ledger, const Fit* fit, const GpuEstimate* gpu = nullptr);

// The other JSON documents (docs/formats.md): trainmem.devices/1, trainmem.models/1,
// trainmem.solve/1 (`step`: the solve step, for max-batch/max-seq), trainmem.advice/1 and
// trainmem.sweep/1 (one sweep: "points"; two: "sweeps"). `model` is the name the user gave.
std::string render_devices_json(const std::vector<Device>& devices);
std::string render_models_json(const std::vector<ModelListing>& models);
std::string render_solve_json(const SolveResult& result, std::string_view model, std::int64_t step);
std::string render_advice_json(const Advice& advice, std::string_view model);
std::string render_sweep_json(const std::vector<Sweep>& sweeps, std::string_view model,
                              std::string_view over);
// trainmem.timeline/1: memory through one step, one row per phase slot with its live bytes by
// tenant and the peak marked, and the tenants' ids and titles (the JSON of render_timeline()).
std::string render_timeline_json(const Ledger& ledger);
// trainmem.form/1: where a plan form starts (`defaults` written as settings: the command line's
// defaults, or those of a framework and method once given, so the form shows what is priced) and,
// for each enumerated plan setting, its vocabulary's canonical names and meanings. The web page
// builds its form from it.
std::string render_form_json(const TrainingPlan& defaults = hf_trainer_defaults());

// SVG pictures: the memory budget as a stacked bar, and sweeps as curves with the device's limit.
// Plain functions from values to strings, like the other renderers; self-contained SVG 1.1 with
// no scripts or external fonts.
// The peak as one stacked bar of tenants, with the device's usable memory and capacity marked.
std::string render_svg_budget(const Ledger& ledger, const Fit* fit, const RenderOptions& options);
// Peak and static state against the swept axis, with the usable limit as a dashed line.
std::string render_svg_sweep(const Sweep& sweep, const RenderOptions& options);
// The seeds' two-axis experiment: two sweeps side by side (e.g. against batch and against seq).
std::string render_svg_sweep_pair(const Sweep& left, const Sweep& right,
                                  const RenderOptions& options);

// The same stacked bar in text, one character per tenant (W G O M A L T X), '.' for free usable
// memory and '|' at the usable limit: "[WWWWGGOOOOOOOAAA....|]".
std::string render_text_stacked_bar(const Ledger& ledger, const Fit* fit, int width);

// What the GPU really holds (estimate.h: gpu_estimate), in words.

// The report's three figures, one line each saying what it is and why it differs.
std::string render_gpu_text(const GpuEstimate& gpu, const RenderOptions& render);
// How the GPU section's figures are reached: peak allocated against the ledger's peak, reserved
// and what it caches, the CUDA context's row and the device total's sum. "" when unavailable.
std::string render_gpu_explain(const GpuEstimate& gpu, const Ledger& ledger,
                               const RenderOptions& render);

// --timeline events: every phase's allocations and frees, grouped by what they are, with the
// allocator's figures after each phase.
std::string render_alloc_timeline(const LoadedModel& model, const TrainingPlan& plan,
                                  const Ledger& ledger, const GpuOptions& options,
                                  const RenderOptions& render);
// --timeline events --json: the same stream as a trainmem.alloc-trace/1 document, the schema of
// a traced loop (validation/alloc_stream.py), one tensor per event, "what" naming each
// allocation's line; bench/replay_trace.cpp replays either. Empty for the textbook convention.
std::string render_alloc_events_json(const LoadedModel& model, const TrainingPlan& plan,
                                     const Ledger& ledger, const GpuOptions& options);

// Renderers of a distributed estimate (estimate/explain with a layout).

// Text: the layout, the most-loaded rank's ledger in full, the peak per stage, host per node.
std::string render_distributed_text(const DistributedEstimate& d, const Fit* fit,
                                    const RenderOptions& options);
// Every rank's lines with formula and source, then the host lines; with `gpu` (the most-loaded
// rank replayed), its GPU figures' arithmetic (render_gpu_explain).
std::string render_distributed_explain(const DistributedEstimate& d, const RenderOptions& options,
                                       const GpuEstimate* gpu = nullptr);
// trainmem.distributed/1 (docs/formats.md); `fit` applies to the most-loaded rank.
// `gpu`: the most-loaded rank replayed through the caching allocator model, or null.
std::string render_distributed_json(const DistributedEstimate& d, const Fit* fit,
                                    const GpuEstimate* gpu = nullptr);

// The seed-001 table (solve.h: table_row).

// Text: the chosen convention's table with the other convention's value beside each figure.
std::string render_table_text(const std::vector<TableRow>& primary,
                              const std::vector<TableRow>& other, Convention convention);
// JSON: {"schema": "trainmem.table/1", "convention", "rows": [...]}.
std::string render_table_json(const std::vector<TableRow>& rows, Convention convention);

// A dataset fitted to a plan (import.h: fit_dataset).
struct DatasetFit;

// The report: a table and the advice (render_dataset_text), or the "dataset" JSON object
// (docs/formats.md) as text.
std::string render_dataset_text(const DatasetFit& d, const RenderOptions& options);
// `document` (a JSON object's text) with the "dataset" object added.
std::string with_dataset_json(const std::string& document, const DatasetFit& d);

}  // namespace trainmem

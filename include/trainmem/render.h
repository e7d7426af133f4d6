// Renderers: plain functions from values to strings. No renderer prints or reads files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/ledger.h"
#include "trainmem/model.h"
#include "trainmem/solve.h"
#include "trainmem/units.h"

namespace trainmem {

struct Fit;          // fit.h
struct GpuEstimate;  // gpu.h

struct RenderOptions {
  Unit unit = Unit::gib;
  int bar_width = 40;  // characters of the proportional bar in the text report
};

// A bar of `width` cells, filled in proportion bytes / scale: "████····".
std::string proportional_bar(std::int64_t bytes, std::int64_t scale, int width);

// The human report, shaped like the seeds' memory budget.
std::string render_text(const Ledger& ledger, const Fit* fit, const RenderOptions& options);
// The arithmetic behind every line (trainmem explain).
std::string render_explain(const Ledger& ledger, const RenderOptions& options);
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

}  // namespace trainmem

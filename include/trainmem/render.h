// Renderers: plain functions from values to strings. No renderer prints or reads files.
#pragma once

#include <optional>
#include <string>

#include "trainmem/device.h"
#include "trainmem/ledger.h"
#include "trainmem/solve.h"
#include "trainmem/units.h"

namespace trainmem {

struct Fit;  // fit.h

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
// The trainmem.ledger/1 JSON document (docs/formats.md).
std::string render_json(const Ledger& ledger, const Fit* fit);

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

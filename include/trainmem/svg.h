// SVG pictures: the memory budget as a stacked bar, and sweeps as curves with the device's limit.
// Plain functions from values to strings, like the other renderers; self-contained SVG 1.1 with
// no scripts or external fonts.
#pragma once

#include <string>

#include "trainmem/fit.h"
#include "trainmem/ledger.h"
#include "trainmem/render.h"
#include "trainmem/sweep.h"

namespace trainmem {

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

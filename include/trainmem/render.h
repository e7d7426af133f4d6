// Renderers: plain functions from values to strings. No renderer prints or reads files.
#pragma once

#include <optional>
#include <string>

#include "trainmem/ledger.h"
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

}  // namespace trainmem

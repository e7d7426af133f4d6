// Renderers of a distributed estimate (estimate/explain with a layout).
#pragma once

#include <string>

#include "trainmem/distributed.h"
#include "trainmem/gpu.h"
#include "trainmem/render.h"

namespace trainmem {

// Text: the layout, the most-loaded rank's ledger in full, the peak per stage, host per node.
std::string render_distributed_text(const DistributedEstimate& d, const Fit* fit,
                                    const RenderOptions& options);
// Every rank's lines with formula and source, then the host lines.
std::string render_distributed_explain(const DistributedEstimate& d, const RenderOptions& options);
// trainmem.distributed/1 (docs/formats.md); `fit` applies to the most-loaded rank.
// `gpu`: the most-loaded rank replayed through the caching allocator model, or null.
std::string render_distributed_json(const DistributedEstimate& d, const Fit* fit,
                                    const GpuEstimate* gpu = nullptr);

}  // namespace trainmem

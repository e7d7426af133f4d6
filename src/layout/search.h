// Layout search internals (src/layout/search.cpp).
#pragma once

#include <vector>

#include "trainmem/distributed.h"

namespace trainmem {

// Hand-written link speeds (bytes/s), stated in docs/distributed.md: NVLink 4 (H100 SXM)
// 450e9 per direction, 400 Gb/s InfiniBand per GPU 50e9, PCIe 5 x16 64e9.
LayoutCost layout_cost(const LoadedModel& model, const TrainingPlan& plan, const Layout& l);

// All candidate layouts of the space (valid for the model), without pricing; for benchmarks.
std::vector<Layout> enumerate_layouts(const ModelSpec& spec, const SearchSpace& space);

}  // namespace trainmem

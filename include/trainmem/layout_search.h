// Searching layouts for a model on a cluster: every valid combination of engine, sharding,
// tensor/pipeline/context/expert parallelism and offload for 1..max GPUs, priced per rank, and the
// fitting ones ranked by a stated throughput proxy (docs/distributed.md, "plan").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

struct SearchSpace {
  std::int64_t min_gpus = 1;
  std::int64_t max_gpus = 64;
  std::int64_t gpus_per_node = 8;  // a node's size; fewer GPUs than this use one node
  bool allow_offload = true;
  std::int64_t host_bytes_per_node = 0;  // 0: host memory unlimited
};

// Communication and pipeline cost of a layout: the throughput proxy, per optimizer step.
struct LayoutCost {
  double comm_bytes = 0;     // bytes each GPU sends per step (DP + TP + CP + offload traffic)
  double comm_seconds = 0;   // comm_bytes over the link each part crosses (NVLink / network / PCIe)
  double bubble = 0;         // pipeline bubble fraction (p - 1) / (v M + p - 1)
  double proxy_seconds = 0;  // comm_seconds / (1 - bubble): lower is faster
};

struct LayoutCandidate {
  Layout layout;
  LayoutPricer::Price price;
  std::int64_t headroom_bytes = 0;  // usable - peak of the most-loaded rank
  LayoutCost cost;
};

struct SearchResult {
  std::vector<LayoutCandidate> fitting;  // ranked: fewest GPUs, then proxy, then headroom
  std::int64_t searched = 0;             // layouts priced
  std::int64_t invalid = 0;              // combinations the model rules out (heads, layers...)
};

// Hand-written link speeds (bytes/s), stated in docs/distributed.md: NVLink 4 (H100 SXM)
// 450e9 per direction, 400 Gb/s InfiniBand per GPU 50e9, PCIe 5 x16 64e9.
LayoutCost layout_cost(const LoadedModel& model, const TrainingPlan& plan, const Layout& l);

// Every valid layout in the space, priced with `pricer` (built for `plan` and `model`).
SearchResult search_layouts(const LoadedModel& model, const TrainingPlan& plan,
                            const LayoutPricer& pricer, const Device& device,
                            const SearchSpace& space);

// The fewest GPUs (1, 2, 4, ... up to max_gpus; gpus_per_node per node) on which `shape` fits:
// its engine, sharding, offload and tp/pp/cp/ep kept, only the GPU count grown. nullopt when even
// max_gpus is not enough or no count is valid for the model.
std::optional<LayoutCandidate> min_gpus(const LoadedModel& model, const LayoutPricer& pricer,
                                        const Device& device, const Layout& shape,
                                        std::int64_t max_gpus, std::int64_t gpus_per_node);

// All candidate layouts of the space (valid for the model), without pricing; for benchmarks.
std::vector<Layout> enumerate_layouts(const ModelSpec& spec, const SearchSpace& space);

}  // namespace trainmem

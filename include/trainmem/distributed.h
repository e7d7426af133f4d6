// Per-rank and per-host memory of a plan spread over GPUs (plan.layout). The single-device ledger
// is the basis; the layout splits its lines per rank (shards, replicas, pipeline stages) and adds
// the engine's own buffers (DDP buckets, ZeRO IPG buckets, FSDP unsharded blocks...), each line
// with its formula and the engine source it comes from. docs/distributed.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainmem/estimate.h"
#include "trainmem/ledger.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// One class of identical ranks: all ranks of one pipeline stage are alike under TP/CP/EP/DP.
struct RankLedger {
  std::string name;             // "stage 0 (ranks 0-7 of each replica)", "every rank"
  std::int64_t stage = 0;       // pipeline stage
  std::int64_t first_rank = 0;  // global rank of the first rank of this class (stage-major)
  std::int64_t ranks = 1;       // how many ranks share these figures
  Ledger ledger;
  Totals totals;
};

// What one node needs in host RAM.
struct HostLedger {
  std::vector<LedgerItem> items;
  Totals totals;
};

struct DistributedEstimate {
  Layout layout;
  std::vector<RankLedger> ranks;  // one per pipeline stage
  std::size_t most_loaded = 0;    // index into ranks of the largest peak
  HostLedger host;                // per node
  std::int64_t dp = 1;            // data-parallel replicas
  std::int64_t shard_group = 1;   // ranks a sharded state is split over
  std::vector<std::string> notes;
};

// The plan must have passed validate() and validate_layout(plan.layout, model.spec).
DistributedEstimate estimate_distributed(const LoadedModel& model, const TrainingPlan& plan);

// Fast pricing for layout search: the peak of the most-loaded rank and the host bytes per node,
// with no text. Built once per (model, plan without layout); prices one layout in microseconds.
class LayoutPricer {
 public:
  LayoutPricer(const LoadedModel& model, const TrainingPlan& plan);
  ~LayoutPricer();
  LayoutPricer(const LayoutPricer&) = delete;
  LayoutPricer& operator=(const LayoutPricer&) = delete;

  struct Price {
    std::int64_t peak_bytes = 0;  // most-loaded rank
    std::int64_t most_loaded_stage = 0;
    std::int64_t host_bytes = 0;  // per node
  };
  Price price(const Layout& layout) const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace trainmem

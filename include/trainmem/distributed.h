// Per-rank and per-host memory of a plan spread over GPUs (plan.layout). The single-device ledger
// is the basis; the layout splits its lines per rank (shards, replicas, pipeline stages) and adds
// the engine's own buffers (DDP buckets, ZeRO IPG buckets, FSDP unsharded blocks...), each line
// with its formula and the engine source it comes from. docs/distributed.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/gpu.h"
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

// The precision an engine runs. DeepSpeed (bf16/fp16.enabled: 16-bit weights, fp32 master in
// its optimizer; runtime/bf16_optimizer.py, zero/stage_1_and_2.py), Megatron (fp32 main params)
// and sharding FSDP (fp32 sharded parameters, 16-bit unsharded copies by MixedPrecision) turn a
// 16-bit mixed-precision request (HF bf16=True, priced alone as torch.autocast over fp32 weights)
// into 16-bit weights with an fp32 master copy. DDP and one GPU keep autocast. Returns the plan
// unchanged when nothing applies.
TrainingPlan with_engine_precision(TrainingPlan plan);
// The two halves of it: whether a layout's engine keeps an fp32 master (DeepSpeed, Megatron,
// sharding FSDP), and the master-copy recipe of an autocast precision (others unchanged).
bool engine_keeps_master(const Layout& layout);
Precision with_master_copy(Precision precision);

// The plan must have passed validate() and validate_layout(plan.layout, model.spec).
DistributedEstimate estimate_distributed(const LoadedModel& model, const TrainingPlan& plan);

// The verdict for a layout, as judge() gives it for one GPU: the most-loaded rank's ledger replayed
// through the caching allocator model (its sharded flat buffers and the activation lines the
// replay cannot split per tensor are one allocation each, as those engines allocate them; NCCL's
// own buffers are not counted) and judged on the device total on CUDA cards. `fit` is empty
// without a device. Errors: a malformed alloc_conf.
struct DistributedVerdict {
  DistributedEstimate estimate;
  GpuEstimate gpu;  // the most-loaded rank
  std::optional<Fit> fit;
};
Result<DistributedVerdict> judge_distributed(const LoadedModel& model, const TrainingPlan& plan,
                                             const std::optional<Device>& device,
                                             const GpuOptions& options);

struct LayoutCandidate;
class LayoutPricer;

// min_gpus() (layout_search.h) under the verdict judge_distributed() gives: the pricer searches on
// live bytes, the answer is checked on the device total, and where they disagree the search runs
// again with the difference held back (at most three times). nullopt when nothing fits.
struct JudgedLayout {
  Layout layout;
  std::int64_t host_bytes = 0;  // per node
  Fit fit;                      // judge_distributed's verdict on the most-loaded rank
};
std::optional<JudgedLayout> min_gpus_judged(const LoadedModel& model, const TrainingPlan& plan,
                                            const LayoutPricer& pricer, const Device& device,
                                            const Layout& shape, std::int64_t max_gpus,
                                            std::int64_t gpus_per_node);

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

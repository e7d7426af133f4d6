// Beyond one GPU: per-rank and per-host ledgers of a plan spread over GPUs, the verdict on the
// most-loaded rank, the search for layouts that fit, and the configs that run a plan (and reading
// them back).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/errors.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// Per-rank and per-host memory of a plan spread over GPUs (plan.layout). The single-device ledger
// is the basis; the layout splits its lines per rank (shards, replicas, pipeline stages) and adds
// the engine's own buffers (DDP buckets, ZeRO IPG buckets, FSDP unsharded blocks...), each line
// with its formula and the engine source it comes from. docs/distributed.md.

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

// The ledger of the most-loaded rank of estimate_distributed(model, plan): what a multi-rank
// measurement is compared with and what a run of steps across ranks replays.
Ledger most_loaded_ledger(const LoadedModel& model, const TrainingPlan& plan);

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

class LayoutPricer;  // below

// min_gpus() (below) under the verdict judge_distributed() gives: the pricer searches on
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

// Searching layouts for a model on a cluster: every valid combination of engine, sharding,
// tensor/pipeline/context/expert parallelism and offload for 1..max GPUs, priced per rank, and the
// fitting ones ranked by a stated throughput proxy (docs/distributed.md, "plan").

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

// Every valid layout in the space, priced with `pricer` (built for `plan` and `model`).
SearchResult search_layouts(const LoadedModel& model, const TrainingPlan& plan,
                            const LayoutPricer& pricer, const Device& device,
                            const SearchSpace& space);

// The search ranks on live bytes (microseconds a layout); a card runs out on its device total.
// judge_candidates walks `ranked` in order and keeps the first `count` whose most-loaded rank
// also fits on the device total (judge_distributed: the caching allocator replayed, the CUDA
// context added), with that verdict; the layouts it passes over are counted.
struct JudgedCandidate {
  LayoutCandidate candidate;
  Fit fit;  // judge_distributed's verdict: the device total on a CUDA card
};
struct JudgedCandidates {
  std::vector<JudgedCandidate> fitting;
  std::int64_t over_on_device_total = 0;  // fit on live bytes, over on the device total
};
JudgedCandidates judge_candidates(const LoadedModel& model, const TrainingPlan& plan,
                                  const Device& device, const std::vector<LayoutCandidate>& ranked,
                                  std::size_t count);

// The fewest GPUs (1, 2, 4, ... up to max_gpus; gpus_per_node per node) on which `shape` fits:
// its engine, sharding, offload and tp/pp/cp/ep kept, only the GPU count grown. nullopt when even
// max_gpus is not enough or no count is valid for the model.
std::optional<LayoutCandidate> min_gpus(const LoadedModel& model, const LayoutPricer& pricer,
                                        const Device& device, const Layout& shape,
                                        std::int64_t max_gpus, std::int64_t gpus_per_node);

// Configs that run the priced plan, and reading them back. emit_config writes concrete numbers
// (never "auto") for every field the estimate depends on; import_config reads the same file into
// a plan, so `estimate --from FILE` prices what the file will run (round trip per format).

// deepspeed: ds_config.json. accelerate_fsdp: an `accelerate launch --config_file` YAML.
// fsdp2: a torchtitan job TOML (FSDP2 fully_shard with TP/PP/CP/EP degrees). torchrun: a DDP
// launch script (HF Trainer arguments). megatron: a Megatron-LM pretrain_gpt.py launch script.
enum class EmitFormat { deepspeed, accelerate_fsdp, fsdp2, torchrun, megatron };

std::string_view name_of(EmitFormat f);  // "accelerate-fsdp"
std::optional<EmitFormat> parse_emit_format(std::string_view s);

// The file for `plan` on `model`. Error when the plan's layout is not one the format can express
// (e.g. ZeRO in an FSDP config); the error names the flag to change.
Result<std::string> emit_config(EmitFormat format, const LoadedModel& model,
                                const TrainingPlan& plan);

// Reads a file written by emit_config (or by hand in the same format) over `base`: the layout,
// and batch, sequence, accumulation, precision and checkpointing where the format states them.
// The format is detected from the content. `gpus_per_node` places the world size on nodes when
// the format does not say (DeepSpeed JSON, torchtitan TOML); 0 means min(world, 8).
Result<TrainingPlan> import_config(const std::string& path, const std::string& text,
                                   const TrainingPlan& base, std::int64_t gpus_per_node);

struct Advice;  // solve.h

// advise()'s options beyond one GPU: when a one-GPU plan does not fit, the fewest GPUs that hold
// it under ZeRO-3 and under FSDP FULL_SHARD (min_gpus_judged, up to 512 GPUs, 8 per node), each
// judged on its most-loaded rank as every option is, inserted before the options that do not fit.
// The command line, the Python module and the web page all add them.
void add_layout_options(const LoadedModel& model, const TrainingPlan& plan, const Device& device,
                        Advice& advice);

}  // namespace trainmem

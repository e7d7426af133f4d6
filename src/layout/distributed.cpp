// estimate_distributed(): the single-device ledger split per rank (one ledger per pipeline stage)
// and the host memory of a node; LayoutPricer: the same arithmetic with numbers only.
#include "trainmem/distributed.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "layout/layout.h"
#include "layout/rank.h"
#include "ledger/format.h"
#include "model/dtype.h"
#include "plan/method.h"
#include "plan/precision.h"
#include "trainmem/render.h"

namespace trainmem {
namespace layout {

Basis make_basis(const LoadedModel& model, const TrainingPlan& plan) {
  TrainingPlan single = plan;
  single.layout = Layout{};
  Basis b;
  b.census = take_census(apply_method(model, single), model.spec);
  b.lines = estimate(model, single).items;
  const PrecisionRecipe& r = recipe(plan.precision);
  b.weight_bytes = dtype_info(r.weights).bits / 8;
  b.grad_bytes = dtype_info(r.gradients).bits / 8;
  b.master = r.master.has_value();
  b.micro_batches = plan.grad_accum;
  b.unreduced_accumulation =
      plan.grad_accum > 1 && plan.behaviour.skips_grad_sync_while_accumulating;
  PhaseMask grad_live = 0;  // every gradient line's phases (the embedding's start later)
  for (const LedgerItem& item : b.lines) {
    if (item.tenant == Tenant::gradients) grad_live |= item.live;
    if (item.tenant == Tenant::optimizer_states) b.state_live = item.live;
  }
  if (grad_live != 0) b.grad_live = grad_live;
  return b;
}

namespace {

// Writes ledger lines with their formulas.
// A layout line's stable id: its tenant (or "host") and its label's words, "gradients.ddp_gradient_
// buckets_a_second_copy_of_the_gradients" -- the labels here are literals, so the id is fixed.
std::string line_id(std::string_view prefix, std::string_view label) {
  std::string id(prefix);
  id += '.';
  bool gap = false;
  for (char c : label) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (gap && id.back() != '.') id += '_';
      id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      gap = false;
    } else {
      gap = true;
    }
  }
  return id;
}

struct LedgerSink {
  std::vector<LedgerItem>& items;
  std::vector<LedgerItem>& host_items;

  void scaled(const LedgerItem& base, double factor, const char* why) {
    if (factor <= 0 || base.bytes == 0) return;
    LedgerItem item = base;
    if (factor != 1.0) {
      item.bytes =
          static_cast<std::int64_t>(std::llround(static_cast<double>(base.bytes) * factor));
      item.formula = fmt::format("{} x {:.6g} ({})", base.formula, factor, why);
      item.source = fmt::format("{}; per-rank share: docs/distributed.md", base.source);
    }
    items.push_back(std::move(item));
  }
  template <class F>
  void add(Tenant t, const char* label, std::int64_t bytes, PhaseMask live, F formula,
           const char* source, bool estimated) {
    if (bytes <= 0) return;
    items.push_back({.id = line_id(tenant_name(t), label),
                     .tenant = t,
                     .label = label,
                     .bytes = bytes,
                     .formula = formula(),
                     .source = source,
                     .live = live,
                     .estimated = estimated});
  }
  template <class F>
  void host(const char* label, std::int64_t bytes, PhaseMask live, F formula, const char* source) {
    if (bytes <= 0) return;
    host_items.push_back({.id = line_id("host", label),
                          .tenant = Tenant::optimizer_states,
                          .label = label,
                          .bytes = bytes,
                          .formula = formula(),
                          .source = source,
                          .live = live,
                          .estimated = false});
  }
};

// Adds numbers per phase slot only; formulas are never built.
struct FastSink {
  std::array<std::int64_t, kPhaseSlots> slots{};
  std::int64_t host_bytes = 0;

  void put(std::int64_t bytes, PhaseMask live) {
    for (int s = 0; s < kPhaseSlots; ++s) {
      if (live & (PhaseMask{1} << s)) slots[static_cast<std::size_t>(s)] += bytes;
    }
  }
  void scaled(const LedgerItem& base, double factor, const char*) {
    if (factor <= 0 || base.bytes == 0) return;
    put(static_cast<std::int64_t>(std::llround(static_cast<double>(base.bytes) * factor)),
        base.live);
  }
  template <class F>
  void add(Tenant, const char*, std::int64_t bytes, PhaseMask live, F&&, const char*, bool) {
    if (bytes > 0) put(bytes, live);
  }
  template <class F>
  void host(const char*, std::int64_t bytes, PhaseMask, F&&, const char*) {
    if (bytes > 0) host_bytes += bytes;
  }
  std::int64_t peak() const { return *std::max_element(slots.begin(), slots.end()); }
};

// Bytes every process of a node holds on the CPU while loading, before sharding.
struct LoadShare {
  double processes = 0;  // full copies per node
  const char* how = "";
  const char* source = "";
};

LoadShare load_share(const Layout& l) {
  const double per_node = static_cast<double>(l.gpus_per_node);
  switch (l.engine) {
    case Engine::megatron:
      return {0, "Megatron builds the model on the GPU (no --use-cpu-initialization)",
              "megatron/core/tensor_parallel/layers.py: weights initialised on the current device"};
    case Engine::fsdp:
      if (l.fsdp_knobs.cpu_ram_efficient_loading) {
        return {1,
                "rank 0 loads the checkpoint, the other ranks build on meta "
                "(cpu_ram_efficient_loading)",
                "accelerate docs/source/usage_guides/fsdp.md fsdp_cpu_ram_efficient_loading"};
      }
      break;
    case Engine::deepspeed:
      if (l.zero_stage == 3 && l.deepspeed.zero_init) {
        return {per_node / static_cast<double>(shard_group_size(l)),
                "each rank materialises only its partition (deepspeed.zero.Init)",
                "deepspeed/runtime/zero/stage3.py:3008 estimate_zero3_model_states_mem_needs "
                "(zero_init)"};
      }
      break;
    case Engine::ddp:
      break;
  }
  return {per_node, "every process loads the whole model before wrapping it",
          "deepspeed/runtime/zero/stage_1_and_2.py:2430 estimate_zero2_model_states_mem_needs "
          "(4 B x params x gpus per node on CPU); transformers from_pretrained per process"};
}

std::int64_t weights_bytes(const Basis& b) {
  std::int64_t n = 0;
  for (const LedgerItem& item : b.lines) {
    if (item.tenant == Tenant::weights) n += item.bytes;
  }
  return n;
}

}  // namespace
}  // namespace layout

DistributedEstimate estimate_distributed(const LoadedModel& model, const TrainingPlan& given) {
  const TrainingPlan plan = with_engine_precision(given);
  const layout::Basis basis = layout::make_basis(model, plan);
  const Layout& l = plan.layout;
  TrainingPlan single = plan;
  single.layout = Layout{};
  const Ledger base = estimate(model, single);

  DistributedEstimate out;
  out.layout = l;
  if (plan.precision != given.precision) {
    out.notes.push_back(fmt::format(
        "{} runs {} as {}: 16-bit weights and gradients with an fp32 master copy in its optimizer, "
        "not torch.autocast over fp32 weights (with_engine_precision, trainmem/distributed.h).",
        name_of(l.engine), name_of(given.precision), name_of(plan.precision)));
  }
  out.dp = data_parallel_size(l);
  out.shard_group = shard_group_size(l);
  const std::int64_t per_stage = world_size(l) / l.pp;
  std::vector<std::vector<LedgerItem>> host_per_stage;
  for (std::int64_t stage = 0; stage < l.pp; ++stage) {
    RankLedger r;
    r.stage = stage;
    r.first_rank = stage * per_stage;
    r.ranks = per_stage;
    r.name = l.pp == 1 ? fmt::format("every rank (0-{})", world_size(l) - 1)
                       : fmt::format("stage {} (ranks {}-{})", stage, r.first_rank,
                                     r.first_rank + per_stage - 1);
    r.ledger.model = base.model;
    r.ledger.plan = plan;
    std::vector<LedgerItem> host;
    layout::LedgerSink sink{r.ledger.items, host};
    layout::price_rank(basis, plan, stage, sink);
    r.totals = totals(r.ledger);
    host_per_stage.push_back(std::move(host));
    out.ranks.push_back(std::move(r));
  }
  for (std::size_t i = 1; i < out.ranks.size(); ++i) {
    if (out.ranks[i].totals.peak_bytes > out.ranks[out.most_loaded].totals.peak_bytes) {
      out.most_loaded = i;
    }
  }

  // Host memory per node: the model while loading, then the offloaded states of every rank.
  const layout::LoadShare load = layout::load_share(l);
  const std::int64_t wbytes = layout::weights_bytes(basis);
  if (load.processes > 0 && wbytes > 0) {
    out.host.items.push_back({.id = "weights.host_loaded_model",
                              .tenant = Tenant::weights,
                              .label = "Model loaded on CPU before sharding",
                              .bytes = static_cast<std::int64_t>(
                                  std::llround(static_cast<double>(wbytes) * load.processes)),
                              .formula = fmt::format("{} B of weights x {:.4g} ({})",
                                                     with_commas(wbytes), load.processes, load.how),
                              .source = load.source,
                              .live = phase_bit(0, Phase::loaded),
                              .estimated = false});
  }
  std::size_t host_stage = 0;
  std::int64_t host_best = -1;
  for (std::size_t s = 0; s < host_per_stage.size(); ++s) {
    std::int64_t sum = 0;
    for (const LedgerItem& item : host_per_stage[s]) sum += item.bytes;
    if (sum > host_best) {
      host_best = sum;
      host_stage = s;
    }
  }
  if (!host_per_stage.empty()) {
    for (LedgerItem item : host_per_stage[host_stage]) {
      item.bytes *= l.gpus_per_node;
      item.formula = fmt::format("({}) x {} ranks per node{}", item.formula, l.gpus_per_node,
                                 l.pin_memory ? ", pinned" : "");
      item.live = item.live & ~phase_bit(0, Phase::loaded);
      out.host.items.push_back(std::move(item));
    }
  }
  Ledger host_ledger;
  host_ledger.items = out.host.items;
  out.host.totals = totals(host_ledger);

  out.notes.push_back(
      fmt::format("Layout: {}. Data-parallel replicas {}, states sharded over {} ranks.",
                  describe(l), out.dp, out.shard_group));
  out.notes.push_back(
      fmt::format("Most-loaded rank: {} (peak {}).", out.ranks[out.most_loaded].name,
                  format_bytes(out.ranks[out.most_loaded].totals.peak_bytes, Unit::gib)));
  if (l.pp > 1) {
    out.notes.push_back(fmt::format(
        "Pipeline 1F1B: stage r holds min(pp - r, micro-batches) = min({} - r, {}) micro-batches "
        "of activations (Megatron schedules.py:957); set --grad-accum to the micro-batch count.",
        l.pp, plan.grad_accum));
  }
  if (layout::keeps_unsharded_gradients(l, basis.unreduced_accumulation)) {
    out.notes.push_back(fmt::format(
        "Gradient accumulation ({} micro-batches) without the reduction until the last "
        "(accelerate's "
        "accumulate runs the others under no_sync; Lightning Fabric's no_backward_sync too): every "
        "FSDP unit keeps its gradients unsharded for the whole step. --sync-each-batch "
        "(accelerate GradientAccumulationPlugin(sync_each_batch=True)) keeps them sharded.",
        plan.grad_accum));
  }
  if (l.pp > 1 && plan.grad_accum < l.pp) {
    out.notes.push_back(
        fmt::format("Only {} micro-batches for {} stages: the pipeline bubble is large.",
                    plan.grad_accum, l.pp));
  }
  return out;
}

Ledger most_loaded_ledger(const LoadedModel& model, const TrainingPlan& plan) {
  DistributedEstimate d = estimate_distributed(model, plan);
  return std::move(d.ranks[d.most_loaded].ledger);
}

// Two bases: the plan as given (DDP) and under a master-copy engine (with_engine_precision), so
// each layout is priced in the precision its engine runs.
struct LayoutPricer::Impl {
  layout::Basis basis;
  layout::Basis engine_basis;
  TrainingPlan plan;
  TrainingPlan engine_plan;
  std::int64_t weight_bytes = 0;         // the model as loaded under `plan`
  std::int64_t engine_weight_bytes = 0;  // under `engine_plan`, as estimate_distributed loads it
};

LayoutPricer::LayoutPricer(const LoadedModel& model, const TrainingPlan& plan) {
  TrainingPlan master = plan;
  master.precision = with_master_copy(plan.precision);
  impl_ =
      new Impl{layout::make_basis(model, plan), layout::make_basis(model, master), plan, master};
  impl_->weight_bytes = layout::weights_bytes(impl_->basis);
  impl_->engine_weight_bytes = layout::weights_bytes(impl_->engine_basis);
}

LayoutPricer::~LayoutPricer() {
  delete impl_;
}

LayoutPricer::Price LayoutPricer::price(const Layout& l) const {
  const bool engine = engine_keeps_master(l);
  TrainingPlan& plan = engine ? impl_->engine_plan : impl_->plan;
  const layout::Basis& basis = engine ? impl_->engine_basis : impl_->basis;
  plan.layout = l;
  Price out;
  // Stage 0 dominates every middle stage (at least as many layers, micro-batches in flight and
  // the embedding); the last stage adds the head and logits. So the peak is over these two.
  std::int64_t host = 0;
  for (std::int64_t stage : {std::int64_t{0}, l.pp - 1}) {
    layout::FastSink sink;
    layout::price_rank(basis, plan, stage, sink);
    const std::int64_t peak = sink.peak();
    if (peak > out.peak_bytes) {
      out.peak_bytes = peak;
      out.most_loaded_stage = stage;
    }
    host = std::max(host, sink.host_bytes);
    if (l.pp == 1) break;
  }
  const layout::LoadShare load = layout::load_share(l);
  // The loaded model in the basis this layout is priced in, as estimate_distributed counts it.
  const std::int64_t loaded = engine ? impl_->engine_weight_bytes : impl_->weight_bytes;
  out.host_bytes = std::max(
      host * l.gpus_per_node,
      static_cast<std::int64_t>(std::llround(static_cast<double>(loaded) * load.processes)));
  return out;
}

}  // namespace trainmem

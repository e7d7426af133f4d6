// Distributed layouts: validation, per-rank shares by hand, ZeRO/FSDP ordering, pipeline stages,
// host memory, and the fast pricer against the full per-rank ledgers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "gpu/alloc_events.h"
#include "layout/census.h"
#include "support/models.h"
#include "trainmem/distributed.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

using testing_support::load_or_fail;

std::int64_t tenant_sum(const Ledger& l, Tenant t) {
  std::int64_t n = 0;
  for (const LedgerItem& i : l.items) {
    if (i.tenant == t) n += i.bytes;
  }
  return n;
}

const LedgerItem* find_line(const Ledger& l, const std::string& label_start) {
  for (const LedgerItem& i : l.items) {
    if (i.label.rfind(label_start, 0) == 0) return &i;
  }
  return nullptr;
}

TrainingPlan plan_on(std::int64_t gpus, Engine engine, int zero = 0) {
  TrainingPlan p;
  p.batch = 1;
  p.seq = 2048;
  p.layout.gpus_per_node = gpus;
  p.layout.engine = engine;
  p.layout.zero_stage = zero;
  return p;
}

// LoRA r=16 on q and v over `gpus` ranks of `engine`.
TrainingPlan lora_qv_on(std::int64_t gpus, Engine engine) {
  TrainingPlan p = plan_on(gpus, engine);
  p.method = Method::lora;
  p.lora.rank = 16;
  p.lora.targets = {"q", "v"};
  return p;
}

TEST(LayoutValidate, ImpossibleLayoutsNameTheFlag) {
  const LoadedModel llama = load_or_fail("llama-3.1-8b");  // 32 heads, 8 kv heads, 32 layers
  Layout l;
  l.gpus_per_node = 8;
  l.tp = 3;
  auto e = validate_layout(l, llama.spec);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "--tp");
  EXPECT_NE(e->reason.find("does not divide the 8 GPUs"), std::string::npos) << e->reason;

  l.gpus_per_node = 6;  // 3 divides 6 GPUs but not 32 heads
  e = validate_layout(l, llama.spec);
  ASSERT_TRUE(e);
  EXPECT_NE(e->reason.find("32 attention heads"), std::string::npos) << e->reason;

  l = Layout{};
  l.gpus_per_node = 16;
  l.tp = 16;  // divides 32 heads but not 8 kv heads
  e = validate_layout(l, llama.spec);
  ASSERT_TRUE(e);
  EXPECT_NE(e->reason.find("8 key/value heads"), std::string::npos) << e->reason;

  l = Layout{};
  l.gpus_per_node = 8;
  l.nodes = 8;
  l.pp = 64;  // 64 stages for 32 layers
  e = validate_layout(l, llama.spec);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "--pp");

  l = Layout{};
  l.gpus_per_node = 2;
  l.ep = 2;  // a dense model
  e = validate_layout(l, llama.spec);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "--ep");

  const LoadedModel mixtral = load_or_fail("mixtral-8x7b-v0.1");  // 8 experts
  l = Layout{};
  l.gpus_per_node = 6;
  l.ep = 3;
  e = validate_layout(l, mixtral.spec);
  ASSERT_TRUE(e);
  EXPECT_NE(e->reason.find("8 experts"), std::string::npos) << e->reason;
  l.gpus_per_node = 8;
  l.ep = 8;
  EXPECT_FALSE(validate_layout(l, mixtral.spec));

  l = Layout{};
  l.zero_stage = 2;
  l.engine = Engine::fsdp;  // ZeRO with FSDP
  e = validate_layout(l);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "--zero");

  l = Layout{};
  l.engine = Engine::deepspeed;
  l.zero_stage = 2;
  l.offload_params = true;  // offload_param is stage 3 only
  e = validate_layout(l);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "--offload");

  l = Layout{};
  l.engine = Engine::fsdp;
  l.fsdp = FsdpMode::hybrid;  // one node: nothing to replicate across
  l.gpus_per_node = 8;
  EXPECT_TRUE(validate_layout(l));
}

TEST(LayoutEngine, ModelParallelismWithoutAnEngineIsMegatron) {
  Layout l;
  l.gpus_per_node = 8;
  EXPECT_EQ(implied_engine(l), Engine::ddp);
  for (std::int64_t Layout::*degree : {&Layout::tp, &Layout::pp, &Layout::cp, &Layout::ep}) {
    Layout m = l;
    m.*degree = 2;
    EXPECT_EQ(implied_engine(m), Engine::megatron);
  }
}

TEST(LayoutSizes, DataParallelAndShardGroup) {
  Layout l;
  l.gpus_per_node = 8;
  l.nodes = 4;
  l.tp = 2;
  l.pp = 2;
  EXPECT_EQ(world_size(l), 32);
  EXPECT_EQ(data_parallel_size(l), 8);
  l.engine = Engine::fsdp;
  l.fsdp = FsdpMode::hybrid;
  EXPECT_EQ(shard_group_size(l), 2);  // 8 GPUs of a node / (tp 2 x pp 2)
  EXPECT_FALSE(overlap_comm(l));
  l.zero_stage = 3;
  EXPECT_TRUE(overlap_comm(l));  // DeepSpeed config.py:353 default for stage 3
}

TEST(LayoutCensus, StagesSplitLayersEvenlyRemainderFirst) {
  EXPECT_EQ(layout::stage_layers(10, 4, 0), (std::pair<std::int64_t, std::int64_t>{0, 3}));
  EXPECT_EQ(layout::stage_layers(10, 4, 1), (std::pair<std::int64_t, std::int64_t>{3, 6}));
  EXPECT_EQ(layout::stage_layers(10, 4, 3), (std::pair<std::int64_t, std::int64_t>{8, 10}));
}

TEST(LayoutCensus, StagesAddUpToTheModel) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  const layout::Census c = layout::take_census(m.inventory, m.spec);
  double sum = 0;
  for (std::int64_t s = 0; s < 4; ++s) sum += layout::stage_params(c, 1, 1, 4, s).all;
  EXPECT_NEAR(sum, static_cast<double>(params_total(m.inventory)), 1.0);
  // Llama 3.1 8B: 4096 hidden, 32 layers; a layer is 4096 x (4096 + 1024 + 1024 + 4096) +
  // 3 x 4096 x 14336 + 2 x 4096 = 218,112,000 params.
  EXPECT_NEAR(c.largest_layer.on_rank(1, 1), 218'112'000.0, 1.0);
  // TP 4 splits the projections (218,103,808) and keeps the two norms (8,192) whole.
  EXPECT_NEAR(c.largest_layer.on_rank(4, 1), 218'103'808.0 / 4 + 8'192, 1.0);
}

TEST(LayoutZero, ShardsStatesByHand) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan single = plan_on(1, Engine::ddp);
  const Ledger base = estimate(m, single);
  const DistributedEstimate z1 = estimate_distributed(m, plan_on(8, Engine::deepspeed, 1));
  ASSERT_EQ(z1.ranks.size(), 1u);
  const Ledger& r = z1.ranks[0].ledger;
  // ZeRO-1: master + Adam / 8, weights and gradients whole.
  EXPECT_NEAR(static_cast<double>(tenant_sum(r, Tenant::optimizer_states)),
              static_cast<double>(tenant_sum(base, Tenant::optimizer_states)) / 8, 2);
  EXPECT_NEAR(static_cast<double>(tenant_sum(r, Tenant::master_weights)),
              static_cast<double>(tenant_sum(base, Tenant::master_weights)) / 8, 2);
  EXPECT_EQ(tenant_sum(r, Tenant::weights), tenant_sum(base, Tenant::weights));
  // One IPG bucket (overlap_comm is off below stage 3): 5e8 elements x 2 B.
  const LedgerItem* ipg = find_line(r, "ZeRO IPG buckets");
  ASSERT_NE(ipg, nullptr);
  EXPECT_EQ(ipg->bytes, 1'000'000'000);
  // fp32 gradient partition at the step: 8,030,261,248 params / 8 x 4 B = 4,015,130,624 B.
  const LedgerItem* part = find_line(r, "fp32 gradient partition");
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(part->bytes, 4'015'130'624);
}

TEST(LayoutZero, Stage3InventoryByHand) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  const DistributedEstimate z3 = estimate_distributed(m, plan_on(8, Engine::deepspeed, 3));
  const Ledger& r = z3.ranks[0].ledger;
  const LedgerItem* ipg = find_line(r, "ZeRO-3 IPG bucket");
  ASSERT_NE(ipg, nullptr);
  EXPECT_EQ(ipg->bytes, 1'000'000'000);  // one buffer, stage3.py:538
  // Gathered: min(1e9, 218,112,000 + 5e7) = 268,112,000 params x 2 B.
  const LedgerItem* gathered = find_line(r, "ZeRO-3 gathered parameters");
  ASSERT_NE(gathered, nullptr);
  EXPECT_EQ(gathered->bytes, 536'224'000);
  // Persistent: the 65 norms of 4,096 (<= 1e5 elements) = 266,240 params x 2 B x (1 - 1/8).
  const LedgerItem* pers = find_line(r, "ZeRO-3 persistent");
  ASSERT_NE(pers, nullptr);
  EXPECT_EQ(pers->bytes, 465'920);
}

TEST(LayoutZero, HigherStagesNeverNeedMorePerGpu) {
  // A model large enough that the default buckets (1 GB) are small beside the states.
  for (const char* name : {"llama-3.1-8b", "qwen2.5-7b"}) {
    const LoadedModel m = load_or_fail(name);
    std::int64_t previous = INT64_MAX;
    std::int64_t previous_static = INT64_MAX;
    for (int stage = 0; stage <= 3; ++stage) {
      const DistributedEstimate d = estimate_distributed(m, plan_on(8, Engine::deepspeed, stage));
      const Totals& t = d.ranks[0].totals;
      EXPECT_LE(t.peak_bytes, previous) << name << " stage " << stage;
      EXPECT_LE(t.static_bytes, previous_static) << name << " stage " << stage;
      previous = t.peak_bytes;
      previous_static = t.static_bytes;
    }
    // And ZeRO-0 on 8 GPUs needs no more than one GPU alone plus its all-reduce bucket.
  }
}

TEST(LayoutFsdp, FullShardBelowGradOpBelowNoShard) {
  const LoadedModel m = load_or_fail("qwen3-8b");
  std::int64_t previous = 0;
  for (FsdpMode mode : {FsdpMode::full, FsdpMode::grad_op, FsdpMode::none}) {
    for (int version : {1, 2}) {
      TrainingPlan p = plan_on(8, Engine::fsdp);
      p.layout.fsdp = mode;
      p.layout.fsdp_version = version;
      const std::int64_t peak = estimate_distributed(m, p).ranks[0].totals.peak_bytes;
      EXPECT_GE(peak, previous) << name_of(mode) << " v" << version;
      if (version == 2) previous = peak;
    }
  }
}

TEST(LayoutFsdp, FullShardByHand) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = plan_on(8, Engine::fsdp);
  const DistributedEstimate d = estimate_distributed(m, p);
  const Ledger& r = d.ranks[0].ledger;
  // Sharded fp32 params: 8,030,261,248 / 8 x 4 B.
  const LedgerItem* params = find_line(r, "Sharded parameters, f32");
  ASSERT_NE(params, nullptr);
  EXPECT_EQ(params->bytes, 4'015'130'624);
  // The root (embeddings 128,256 x 4,096 twice, untied, + final norm 4,096) stays unsharded.
  const LedgerItem* root = find_line(r, "Unsharded root");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->bytes, (2 * 128'256 * 4'096 + 4'096) * 2);
  // Two blocks in flight: the one computing and the prefetched one, 218,112,000 x 2 B each.
  const LedgerItem* computing = find_line(r, "Unsharded block: the one computing");
  const LedgerItem* prefetched = find_line(r, "Unsharded block: the prefetched one");
  ASSERT_NE(computing, nullptr);
  ASSERT_NE(prefetched, nullptr);
  EXPECT_EQ(computing->bytes, 436'224'000);
  EXPECT_EQ(prefetched->bytes, 436'224'000);
  // At backward_start (the head's backward) only the prefetched block is gathered; the one
  // computing is live again late in backward (validation/data/distributed.jsonl).
  const PhaseMask start = phase_bit(1, Phase::backward_start);
  const PhaseMask late = phase_bit(1, Phase::backward);
  EXPECT_EQ(computing->live & start, 0u);
  EXPECT_NE(computing->live & late, 0u);
  EXPECT_NE(prefetched->live & start, 0u);
  EXPECT_EQ(find_line(r, "Weights"), nullptr);  // no bf16 copy persists
}

TEST(LayoutFsdp, FrozenBaseWeightsReduceScatterNoGradients) {
  // LoRA r=16 on q and v of llama-3.1-8b: a layer trains q's A (16 x 4,096) and B (4,096 x 16)
  // and v's A (16 x 4,096) and B (1,024 x 16) = 212,992 params. FSDP2 reduce-scatters only the
  // parameters that got a gradient; FSDP1's flat gradient covers the whole unit (218,324,992
  // params with the adapters) once any of it trains.
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = lora_qv_on(8, Engine::fsdp);
  for (int version : {1, 2}) {
    p.layout.fsdp_version = version;
    const DistributedEstimate d = estimate_distributed(m, p);
    const LedgerItem* grads = find_line(d.ranks[0].ledger, "Unsharded gradients of one unit");
    ASSERT_NE(grads, nullptr) << "v" << version;
    const std::int64_t params = version == 2 ? 212'992 : 218'324'992;
    EXPECT_EQ(grads->bytes, params * 2) << "v" << version;
  }
  // Nothing trains in the layers (only the head): no unit gradient at all.
  p.method = Method::freeze;
  p.freeze.train_modules = {"lm_head"};
  p.layout.fsdp_version = 2;
  const DistributedEstimate frozen = estimate_distributed(m, p);
  EXPECT_EQ(find_line(frozen.ranks[0].ledger, "Unsharded gradients of one"), nullptr);
}

// FSDP1's FlatParameter gradient covers the whole unit once any of it trains, in its shard as
// well: LoRA r16 on q and v of llama-3.1-8b on 8 GPUs, fp32 master (the sharded fp32 gradients):
// FSDP1 every decoder layer, 32 x 218,324,992 params / 8 x 4 B; FSDP2 the adapters only,
// 32 x 212,992 / 8 x 4 B.
TEST(LayoutFsdp, Fsdp1ShardedGradientsCoverTheTrainedUnits) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = lora_qv_on(8, Engine::fsdp);
  for (int version : {1, 2}) {
    p.layout.fsdp_version = version;
    const DistributedEstimate d = estimate_distributed(m, p);
    const LedgerItem* grads = find_line(d.ranks[0].ledger, "Sharded gradients, f32");
    ASSERT_NE(grads, nullptr) << "v" << version;
    const std::int64_t params = std::int64_t{32} * (version == 1 ? 218'324'992 : 212'992);
    EXPECT_EQ(grads->bytes, params / 8 * 4) << "v" << version;
  }
}

// Accumulating without the reduction (accelerate's accumulate -> no_sync, the hf profile's
// default) keeps every unit's gradients unsharded until the last micro-batch: the full fine-tune
// of llama-3.1-8b on 8 GPUs at grad_accum 2 holds all 8,030,261,248 gradients in bf16 beside the
// fp32 shards; grad_accum 1, or torchtune's recipes (which reduce every micro-batch), none.
TEST(LayoutFsdp, UnreducedAccumulationKeepsGradientsUnsharded) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = plan_on(8, Engine::fsdp);
  p.grad_accum = 2;
  const std::string label = "Unsharded gradients accumulated until the last micro-batch";
  const DistributedEstimate accumulating = estimate_distributed(m, p);
  const LedgerItem* kept = find_line(accumulating.ranks[0].ledger, label);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->bytes, std::int64_t{8'030'261'248} * 2);
  p.grad_accum = 1;
  EXPECT_EQ(find_line(estimate_distributed(m, p).ranks[0].ledger, label), nullptr);
  p.grad_accum = 2;
  p.behaviour.skips_grad_sync_while_accumulating = false;  // torchtune
  EXPECT_EQ(find_line(estimate_distributed(m, p).ranks[0].ledger, label), nullptr);
}

// A rank's gradient line that covers frozen parameters (FSDP1 LoRA accumulating under no_sync,
// 32 layers x 218,324,992 params x 2 B on each of 2 ranks) is replayed layer by layer, as each
// unit's backward makes its gradient, not whole at the start of backward beside every
// checkpointed input.
TEST(LayoutFsdp, UnitGradientsAppearLayerByLayerInTheReplay) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = lora_qv_on(2, Engine::fsdp);
  p.precision = Precision::bf16;
  p.behaviour.adapters_fp32 = false;  // FSDP1 flattens one dtype per unit (litgpt's adapters)
  p.layout.fsdp_version = 1;
  p.checkpointing = Checkpointing::full;
  p.grad_accum = 8;
  const DistributedEstimate d = estimate_distributed(m, p);
  const Ledger& rank = d.ranks[d.most_loaded].ledger;
  const gpu::EventStream s = gpu::alloc_events(m, p, rank);
  std::int64_t in_backward = 0, bytes = 0;
  for (const gpu::AllocEvent& e : s.events) {
    if (e.op != gpu::Op::alloc || e.label < 0 || e.phase != static_cast<int>(Phase::backward) ||
        s.labels[static_cast<std::size_t>(e.label)] != "gradients, this rank's shard (per tensor)")
      continue;
    in_backward += e.count;
    bytes += e.bytes * e.count;
  }
  EXPECT_GE(in_backward, 32);  // at least a tensor per layer
  EXPECT_NEAR(static_cast<double>(bytes), 32.0 * 218'324'992 * 2, 1e-3 * 32 * 218'324'992 * 2);
}

TEST(LayoutFsdp, SeparateUnitsLeaveTheRoot) {
  // torchtune's custom_sharded_layers: ['tok_embeddings', 'output'] on llama-3.1-8b (untied):
  // the root keeps the final norm (4,096 x 2 B); the lm_head (128,256 x 4,096 x 2 B) is gathered
  // in forward (it is the one computing at the end of forward) and at backward_start (the last
  // block is not yet prefetched then); the embedding (the same size) at the end of backward.
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = plan_on(8, Engine::fsdp);
  ASSERT_FALSE(set_separate_units("['tok_embeddings', 'output']", p.layout.fsdp_knobs));
  const DistributedEstimate d = estimate_distributed(m, p);
  const Ledger& r = d.ranks[0].ledger;
  const LedgerItem* root = find_line(r, "Unsharded root");
  const LedgerItem* head = find_line(r, "Unsharded lm_head");
  const LedgerItem* embedding = find_line(r, "Unsharded embedding");
  const LedgerItem* computing = find_line(r, "Unsharded block: the one computing");
  const LedgerItem* prefetched = find_line(r, "Unsharded block: the prefetched one");
  ASSERT_TRUE(root && head && embedding && computing && prefetched);
  EXPECT_EQ(root->bytes, 4'096 * 2);
  EXPECT_EQ(head->bytes, 128'256LL * 4'096 * 2);
  EXPECT_EQ(embedding->bytes, 128'256LL * 4'096 * 2);
  const PhaseMask forward = phase_bit(1, Phase::forward);
  const PhaseMask start = phase_bit(1, Phase::backward_start);
  const PhaseMask end = phase_bit(1, Phase::end_of_backward);
  EXPECT_NE(head->live & forward, 0u);
  EXPECT_NE(head->live & start, 0u);
  EXPECT_EQ(computing->live & forward, 0u);
  EXPECT_EQ(prefetched->live & start, 0u);
  EXPECT_NE(prefetched->live & forward, 0u);
  EXPECT_EQ(embedding->live, phase_bit(0, Phase::end_of_backward) | end);
  // A tied embedding is also the head: one weight, held with the root as before.
  const LoadedModel tied = load_or_fail("qwen3-0.6b");
  const DistributedEstimate t = estimate_distributed(tied, p);
  EXPECT_NE(find_line(t.ranks[0].ledger, "Unsharded root (embedding, final norm, head)"), nullptr);
  EXPECT_EQ(find_line(t.ranks[0].ledger, "Unsharded lm_head"), nullptr);
  EXPECT_EQ(find_line(t.ranks[0].ledger, "Unsharded embedding"), nullptr);
  // Names other than the embedding and the output are refused, for the error to name.
  FsdpKnobs knobs;
  EXPECT_EQ(set_separate_units("embed_tokens, norm", knobs), std::optional<std::string>("norm"));
  EXPECT_TRUE(knobs.embedding_unit);
  EXPECT_FALSE(knobs.head_unit);
}

TEST(LayoutDdp, BucketsCopyTheGradients) {
  const LoadedModel m = load_or_fail("qwen3-0.6b");
  TrainingPlan p = plan_on(4, Engine::ddp);
  const DistributedEstimate d = estimate_distributed(m, p);
  const Ledger& r = d.ranks[0].ledger;
  const LedgerItem* buckets = find_line(r, "DDP gradient buckets");
  ASSERT_NE(buckets, nullptr);
  EXPECT_EQ(buckets->bytes, params_total(m.inventory) * 2);
  // A cap under one byte (DDP's int() makes it 0) prices the same copy: no division by zero.
  p.layout.ddp_bucket_cap_mb = 1e-7;
  ASSERT_FALSE(validate_layout(p.layout));
  const DistributedEstimate sub_byte = estimate_distributed(m, p);  // kept: tiny points into it
  const LedgerItem* tiny = find_line(sub_byte.ranks[0].ledger, "DDP gradient buckets");
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->bytes, params_total(m.inventory) * 2);
  // NaN and infinity are refused, naming the flag.
  for (const double bad : {std::nan(""), std::numeric_limits<double>::infinity(), 0.0, -5.0}) {
    p.layout.ddp_bucket_cap_mb = bad;
    const auto e = validate_layout(p.layout);
    ASSERT_TRUE(e) << bad;
    EXPECT_EQ(e->field, "--bucket-cap-mb");
  }
  p.layout.ddp_bucket_cap_mb = 25;
  p.layout.gradient_as_bucket_view = true;
  const DistributedEstimate view = estimate_distributed(m, p);
  EXPECT_EQ(find_line(view.ranks[0].ledger, "DDP gradient buckets"), nullptr);
}

TEST(LayoutPipeline, FirstStageHoldsMostActivationsLastTheLogits) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = plan_on(8, Engine::megatron);
  p.layout.pp = 4;
  p.grad_accum = 8;
  const Ledger base = estimate(m, plan_on(1, Engine::ddp));
  const DistributedEstimate d = estimate_distributed(m, p);
  ASSERT_EQ(d.ranks.size(), 4u);
  const double acts = static_cast<double>(tenant_sum(base, Tenant::activations));
  // Stage 0: 8 of 32 layers, min(4 - 0, 8) = 4 micro-batches in flight -> 1.0 x one model's.
  EXPECT_NEAR(static_cast<double>(tenant_sum(d.ranks[0].ledger, Tenant::activations)), acts,
              acts * 1e-6);
  // Stage 3: one micro-batch of 8 layers -> a quarter.
  EXPECT_NEAR(static_cast<double>(tenant_sum(d.ranks[3].ledger, Tenant::activations)), acts / 4,
              acts * 1e-6);
  EXPECT_EQ(tenant_sum(d.ranks[0].ledger, Tenant::logits), 0);
  EXPECT_EQ(tenant_sum(d.ranks[3].ledger, Tenant::logits), tenant_sum(base, Tenant::logits));
  // Stage 0 activations dominate the logits here: the most loaded is stage 0.
  EXPECT_EQ(d.ranks[d.most_loaded].stage, 0);
}

TEST(LayoutTensorParallel, SequenceParallelSplitsAllActivations) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  const Ledger base = estimate(m, plan_on(1, Engine::ddp));
  TrainingPlan p = plan_on(4, Engine::megatron);
  p.layout.tp = 4;
  const double acts = static_cast<double>(tenant_sum(base, Tenant::activations));
  // Without SP: (10 + 24/4) / 34 of the activations (Korthikanti Table 2).
  EXPECT_NEAR(static_cast<double>(
                  tenant_sum(estimate_distributed(m, p).ranks[0].ledger, Tenant::activations)),
              acts * 16.0 / 34.0, acts * 1e-6);
  p.layout.sequence_parallel = true;
  EXPECT_NEAR(static_cast<double>(
                  tenant_sum(estimate_distributed(m, p).ranks[0].ledger, Tenant::activations)),
              acts / 4, acts * 1e-6);
}

TEST(LayoutMegatron, DistributedOptimizerBytesPerParam) {
  // Megatron: 18 B/param without, 6 + 12/DP with the distributed optimizer
  // (theoretical_memory_usage.py:296); our ledger's weights + main grads + master + Adam.
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = plan_on(8, Engine::megatron);
  const auto static_of = [&](const TrainingPlan& plan) {
    const DistributedEstimate d = estimate_distributed(m, plan);
    const Ledger& r = d.ranks[0].ledger;
    return tenant_sum(r, Tenant::weights) + tenant_sum(r, Tenant::gradients) +
           tenant_sum(r, Tenant::master_weights) + tenant_sum(r, Tenant::optimizer_states);
  };
  const double n = static_cast<double>(params_total(m.inventory));
  EXPECT_NEAR(static_cast<double>(static_of(p)) / n, 18.0, 0.01);
  p.layout.distributed_optimizer = true;
  EXPECT_NEAR(static_cast<double>(static_of(p)) / n, 6.0 + 12.0 / 8, 0.01);
}

TEST(LayoutHost, LoadingAndOffloadPerNode) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  const Ledger base = estimate(m, plan_on(1, Engine::ddp));
  const std::int64_t weights = tenant_sum(base, Tenant::weights);
  const DistributedEstimate ddp = estimate_distributed(m, plan_on(8, Engine::ddp));
  ASSERT_FALSE(ddp.host.items.empty());
  EXPECT_EQ(ddp.host.items[0].bytes, 8 * weights);  // every process loads the model

  TrainingPlan p = plan_on(8, Engine::deepspeed, 3);
  p.layout.offload_optimizer = true;
  const DistributedEstimate z3 = estimate_distributed(m, p);
  const std::int64_t states =
      tenant_sum(base, Tenant::master_weights) + tenant_sum(base, Tenant::optimizer_states);
  std::int64_t host_states = 0;
  for (const LedgerItem& i : z3.host.items) {
    if (i.label.rfind("fp32 master + optimizer", 0) == 0) host_states = i.bytes;
  }
  // Eight ranks per node, each with 1/8 of the states: the node holds them all once.
  EXPECT_NEAR(static_cast<double>(host_states), static_cast<double>(states), 16);
  EXPECT_EQ(tenant_sum(z3.ranks[0].ledger, Tenant::optimizer_states), 0);
}

TEST(LayoutPricer, MatchesTheFullLedgers) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = plan_on(8, Engine::ddp);
  p.grad_accum = 8;
  const LayoutPricer pricer(m, p);
  std::vector<Layout> layouts;
  for (int z = 0; z <= 3; ++z) {
    Layout l;
    l.gpus_per_node = 8;
    l.engine = Engine::deepspeed;
    l.zero_stage = z;
    layouts.push_back(l);
  }
  Layout pp;
  pp.gpus_per_node = 8;
  pp.nodes = 2;
  pp.engine = Engine::megatron;
  pp.tp = 2;
  pp.pp = 4;
  pp.distributed_optimizer = true;
  layouts.push_back(pp);
  Layout fsdp;
  fsdp.gpus_per_node = 8;
  fsdp.engine = Engine::fsdp;
  fsdp.offload_optimizer = fsdp.offload_params = true;
  layouts.push_back(fsdp);
  for (const Layout& l : layouts) {
    TrainingPlan q = p;
    q.layout = l;
    const DistributedEstimate d = estimate_distributed(m, q);
    const LayoutPricer::Price price = pricer.price(l);
    EXPECT_EQ(price.peak_bytes, d.ranks[d.most_loaded].totals.peak_bytes) << describe(l);
    EXPECT_EQ(price.most_loaded_stage, d.ranks[d.most_loaded].stage) << describe(l);
    EXPECT_EQ(price.host_bytes, d.host.totals.peak_bytes) << describe(l);
  }
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

// DDP's buckets copy each gradient in its own dtype: with LoRA on a bf16 base the adapters'
// gradients are fp32 (PEFT's upcast), so the buckets are the rank's gradient bytes, more than
// T x 2 B (measured: validation/data/distributed.jsonl, qwen3-tiny LoRA DDP row).
TEST(LayoutDdp, BucketsTakeEachGradientsDtype) {
  const LoadedModel m = load_or_fail("qwen3-0.6b");
  TrainingPlan p = plan_on(2, Engine::ddp);
  p.precision = Precision::bf16;
  p.method = Method::lora;
  const DistributedEstimate d = estimate_distributed(m, p);
  const Ledger& r = d.ranks[0].ledger;
  const LedgerItem* buckets = find_line(r, "DDP gradient buckets");
  ASSERT_NE(buckets, nullptr);
  // The .grad tensors of the rank (unsharded under DDP) are exactly what the buckets copy.
  std::int64_t grads = 0;
  for (const LedgerItem& i : r.items) {
    if (i.tenant == Tenant::gradients && i.label.rfind("DDP", 0) != 0) grads += i.bytes;
  }
  EXPECT_EQ(buckets->bytes, grads);
  EXPECT_GT(grads, 0);
}

// ZeRO-3 never gathers more than the rank's parameters: with the live and prefetch limits far
// above the model, the gathered line is every parameter x 2 B.
TEST(LayoutZero, Stage3GathersAtMostTheModel) {
  const LoadedModel m = load_or_fail("qwen3-0.6b");
  TrainingPlan p = plan_on(2, Engine::deepspeed, 3);
  p.layout.deepspeed.stage3_prefetch_bucket_size = 1'000'000'000'000;
  p.layout.deepspeed.stage3_max_live_parameters = 1'000'000'000'000;
  const DistributedEstimate d = estimate_distributed(m, p);
  const LedgerItem* gathered = find_line(d.ranks[0].ledger, "ZeRO-3 gathered parameters");
  ASSERT_NE(gathered, nullptr);
  EXPECT_EQ(gathered->bytes, params_total(m.inventory) * 2);
}

// ZeRO-1/2's IPG buckets appear at the first gradient hook, after the head's backward: live late
// in backward, not at backward_start (DeepSpeed stage_1_and_2.py process_gradients).
TEST(LayoutZero, IpgBucketsLiveLateInBackwardOnly) {
  const LoadedModel m = load_or_fail("qwen3-0.6b");
  const DistributedEstimate d = estimate_distributed(m, plan_on(2, Engine::deepspeed, 2));
  const LedgerItem* ipg = find_line(d.ranks[0].ledger, "ZeRO IPG buckets");
  ASSERT_NE(ipg, nullptr);
  EXPECT_EQ(ipg->live & phase_bit(1, Phase::backward_start), 0u);
  EXPECT_NE(ipg->live & phase_bit(1, Phase::backward), 0u);
  EXPECT_EQ(ipg->live & phase_bit(1, Phase::forward), 0u);
}

}  // namespace
}  // namespace trainmem

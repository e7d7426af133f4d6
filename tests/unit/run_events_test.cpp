// Steps of different lengths chained into one event stream (src/gpu/run_events.h) and replayed
// through one allocator: the hand-over between steps, the phase numbering, that a run of equal
// steps is one step, and that lengths that vary leave the cache larger.
#include "gpu/run_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "gpu/alloc_events.h"
#include "gpu/caching_allocator.h"
#include "plan/framework.h"
#include "support/models.h"
#include "trainmem/estimate.h"
#include "trainmem/import.h"

namespace trainmem {
namespace {

// torchtune 0.1's LoRA recipe on Llama-2-7B (the tutorial rows of the published GPU data):
// batch 2, checkpointing on, the fp32 logits kept through backward.
TrainingPlan tutorial_plan(std::int64_t seq) {
  TrainingPlan p;
  p.method = Method::lora;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = seq;
  p.checkpointing = Checkpointing::full;
  p.lora.rank = 8;
  p.lora.targets = {"q", "v"};
  EXPECT_FALSE(parse_framework("torchtune@0.1", p.framework, p.library_versions).has_value());
  apply_framework(p);
  return p;
}

// The two-step stream of the plan at its own length, replayed.
gpu::ReplayResult replay_two_steps(const LoadedModel& m, const TrainingPlan& p) {
  return gpu::replay(gpu::alloc_events(m, p, estimate(m, p)).events, *gpu::parse_alloc_conf(""), {},
                     kPhaseSlots);
}

gpu::ReplayResult replay_run(const gpu::RunStream& run) {
  return gpu::replay(run.events, *gpu::parse_alloc_conf(""), {}, run.phase_count);
}

// Allocations left live at the end of a stream (alloc minus free).
std::int64_t live_at_end(const std::vector<gpu::AllocEvent>& events) {
  std::map<std::int32_t, int> live;
  for (const gpu::AllocEvent& e : events) {
    if (e.op == gpu::Op::alloc) live[e.id] = 1;
    if (e.op == gpu::Op::free) live.erase(e.id);
  }
  return static_cast<std::int64_t>(live.size());
}

TEST(RunEvents, PhasesOfLaterStepsMapToTheSteadySlots) {
  // Step 1 is the first step's slots; step 2 (phases kPhaseCount ..) and every later one the
  // steady step's: step 3's first phase is the steady step's first slot, its last the last.
  EXPECT_EQ(gpu::run_phase_slot(0), 0);
  EXPECT_EQ(gpu::run_phase_slot(kPhaseCount - 1), kPhaseCount - 1);
  EXPECT_EQ(gpu::run_phase_slot(kPhaseCount), kPhaseCount);
  EXPECT_EQ(gpu::run_phase_slot(2 * kPhaseCount), kPhaseCount);
  EXPECT_EQ(gpu::run_phase_slot(3 * kPhaseCount - 1), kPhaseSlots - 1);
}

TEST(RunEvents, EqualStepsReplayAsOneStep) {
  const LoadedModel m = testing_support::validation_model("published/llama-2-7b");
  const TrainingPlan p = tutorial_plan(512);
  const Ledger l = estimate(m, p);
  const gpu::ReplayResult single = replay_two_steps(m, p);
  const std::vector<std::int64_t> lengths = {512, 512, 512, 512};
  const auto run = gpu::run_events(m, p, lengths);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->steps, 4);
  EXPECT_EQ(run->phase_count, 4 * kPhaseCount);
  const gpu::ReplayResult r = replay_run(*run);
  // The steady state repeats: every later step finds the blocks the one before freed.
  EXPECT_EQ(r.peak_allocated_bytes, single.peak_allocated_bytes);
  EXPECT_EQ(r.peak_reserved_bytes, single.peak_reserved_bytes);
  // What each step hands the next is freed by it: a run leaks nothing a single closed step
  // does not keep (weights, optimizer state, workspaces).
  EXPECT_EQ(live_at_end(run->events),
            live_at_end(gpu::alloc_events(m, p, l, {.close_steady_step = true}).events));
}

// Each length is one step: a run of one length is the first step alone (no steady step after
// it), and the run's peak is the first step's of the two-step stream.
TEST(RunEvents, OneLengthIsTheFirstStepAlone) {
  const LoadedModel m = testing_support::validation_model("published/llama-2-7b");
  const TrainingPlan p = tutorial_plan(512);
  const gpu::ReplayResult two = replay_two_steps(m, p);
  std::int64_t first_step = 0;
  for (int ph = 0; ph < kPhaseCount; ++ph) {
    first_step = std::max(first_step, two.phases[static_cast<std::size_t>(ph)].allocated_bytes);
  }
  const std::vector<std::int64_t> one = {512};
  const auto run = gpu::run_events(m, p, one);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->steps, 1);
  EXPECT_EQ(run->phase_count, kPhaseCount);
  EXPECT_EQ(replay_run(*run).peak_allocated_bytes, first_step);
  // The steady step keeps the previous step's fp32 logits into its forward: above the first.
  EXPECT_GT(two.peak_allocated_bytes, first_step);
}

TEST(RunEvents, VaryingLengthsLeaveTheCacheLarger) {
  const LoadedModel m = testing_support::validation_model("published/llama-2-7b");
  const TrainingPlan p = tutorial_plan(512);
  const std::vector<std::int64_t> same = {512, 512, 512};
  const std::vector<std::int64_t> rising = {128, 256, 384, 512};
  const gpu::ReplayResult flat = replay_run(*gpu::run_events(m, p, same));
  const gpu::ReplayResult varied = replay_run(*gpu::run_events(m, p, rising));
  // The longest step holds no more than in a flat run (in its forward the logits the loop keeps
  // from the step before are 384 tokens', TheStepBeforeHandsOverItsKeptLogits)...
  EXPECT_LE(varied.peak_allocated_bytes, flat.peak_allocated_bytes);
  // ...but the blocks cached for 128, 256 and 384 tokens cannot serve 512 (each large request is
  // its own segment, rounded to 2 MiB), so more is reserved.
  EXPECT_GT(varied.peak_reserved_bytes, flat.peak_reserved_bytes);
}

// The loop keeps the logits until the next forward returns: in a run the step after a shorter
// one holds that step's logits in its forward, not its own length's twice.
TEST(RunEvents, TheStepBeforeHandsOverItsKeptLogits) {
  const LoadedModel m = testing_support::validation_model("published/llama-2-7b");
  const TrainingPlan p = tutorial_plan(512);
  const std::vector<std::int64_t> flat = {512, 512};
  const std::vector<std::int64_t> rising = {384, 512};
  const int forward = kPhaseCount + static_cast<int>(Phase::forward);  // the 512 step's
  const auto a = gpu::run_events(m, p, flat);
  const auto b = gpu::run_events(m, p, rising);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  auto kept = [&](std::int64_t seq) {
    for (const LedgerItem& i : estimate(m, tutorial_plan(seq)).items) {
      if (i.id == "logits.previous_output") return i.bytes;
    }
    return std::int64_t{-1};
  };
  ASSERT_GT(kept(384), 0);
  // 2 x 512 vs 2 x 384 tokens of fp32 logits (torchtune 0.1's `.float()`, V 32,000):
  // 2 x 128 x 32,000 x 4 B fewer.
  EXPECT_EQ(kept(512) - kept(384), 2 * 128 * 32000 * 4);
  // Requested bytes at the forward's high-water mark (no allocator rounding).
  const auto high = [forward](const gpu::RunStream& r) {
    return gpu::requested_high_water(r.events, r.phase_count)[static_cast<std::size_t>(forward)];
  };
  EXPECT_EQ(high(*a) - high(*b), kept(512) - kept(384));
}

// A run stops before the step that would overflow the 16-bit phase numbers: 4,681 steps.
TEST(RunEvents, LongRunsStopAtThePhaseLimit) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  const std::vector<std::int64_t> lengths(6000, 32);
  const auto run = gpu::run_events(m, tutorial_plan(64), lengths);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->steps, INT16_MAX / kPhaseCount);
  EXPECT_LE(run->phase_count, INT16_MAX + 1);
  const gpu::ReplayResult r = replay_run(*run);
  EXPECT_GT(r.peak_allocated_bytes, 0);
}

// A model with tens of thousands of tiny experts allocates ~10^7 tensors a step (each replayed
// one by one): its run stops at kMaxRunTensors instead of running for minutes.
TEST(RunEvents, RunsStopAtTheTensorLimit) {
  ModelSpec s;
  s.name = "many-experts";
  s.model_type = "llama";
  s.heads = 1;
  s.kv_heads = 1;
  s.head_dim = 64;
  s.hidden = 64;
  s.intermediate = 2;
  s.vocab = 17;
  s.layers = 3;
  s.max_positions = 1024;
  s.moe.experts = 33'550;
  s.moe.top_k = 1;
  s.moe.expert_intermediate = 2;
  const LoadedModel m = model_from_spec(s, SourceKind::preset, "many-experts");
  TrainingPlan p;
  p.seq = 8;
  const std::vector<std::int64_t> lengths(100, 8);
  const auto run = gpu::run_events(m, p, lengths);
  ASSERT_TRUE(run.has_value());
  std::int64_t tensors = 0;
  for (const gpu::AllocEvent& e : run->events) tensors += e.op == gpu::Op::alloc ? e.count : 0;
  EXPECT_LT(run->steps, 100);
  EXPECT_LE(tensors, gpu::kMaxRunTensors);
}

TEST(RunEvents, EmptyLengthsAreNoRun) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  EXPECT_FALSE(gpu::run_events(m, tutorial_plan(64), {}).has_value());
}

// gpu_estimate over a run: the run's figures, and a device total that is the larger one.
TEST(RunEvents, GpuEstimateReportsTheRun) {
  const LoadedModel m = testing_support::validation_model("published/llama-2-7b");
  const TrainingPlan p = tutorial_plan(512);
  const Ledger l = estimate(m, p);
  GpuOptions o;
  const GpuEstimate single = *gpu_estimate(m, p, l, o);
  EXPECT_EQ(single.run_steps, 0);
  o.step_lengths = {128, 256, 384, 512, 2048};  // 2,048 is beyond seq: priced at 512
  const GpuEstimate run = *gpu_estimate(m, p, l, o);
  EXPECT_EQ(run.run_steps, 5);
  EXPECT_EQ(run.peak_reserved_bytes, single.peak_reserved_bytes) << "the single step's own";
  EXPECT_GT(run.run_peak_reserved_bytes, single.peak_reserved_bytes);
  EXPECT_LE(run.run_peak_allocated_bytes, single.peak_allocated_bytes);
  EXPECT_EQ(run.device_total_bytes, run.run_device_total_bytes);
  EXPECT_EQ(run.run_device_total_bytes - run.run_peak_reserved_bytes,
            single.device_total_bytes - single.peak_reserved_bytes)
      << "the same context on top";
  auto says = [](const GpuEstimate& e, const std::string& text) {
    return std::any_of(e.notes.begin(), e.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(says(run, "blocks cached for one length do not serve a longer one"));
  // A run of batches all shorter than the plan's length reserves no more than one step at it.
  o.step_lengths = {64, 128};
  const GpuEstimate shorter = *gpu_estimate(m, p, l, o);
  EXPECT_LT(shorter.run_peak_reserved_bytes, single.peak_reserved_bytes);
  EXPECT_EQ(shorter.device_total_bytes, single.device_total_bytes);
  EXPECT_TRUE(says(shorter, "no more than one step at the plan's length (512 tokens"));
}

// The replay holds the device's cuBLAS workspaces, one per handle: on sm86 4,096 KiB x 2 +
// 16 KiB x 8 = 8,519,680 B each, on sm90 4,096 KiB x 8 = 33,554,432 B (CublasHandlePool.cpp
// defaults). Both are multiples of 512, so peak allocated differs by exactly 2 x the difference.
TEST(RunEvents, TheReplayUsesTheDevicesCublasWorkspaces) {
  const LoadedModel m = testing_support::validation_model("published/llama-2-7b");
  const TrainingPlan p = tutorial_plan(512);
  const Ledger l = estimate(m, p);
  GpuOptions hopper;
  hopper.compute_capability = "9.0";
  GpuOptions ampere;
  ampere.compute_capability = "8.6";
  const GpuEstimate h = *gpu_estimate(m, p, l, hopper);
  const GpuEstimate a = *gpu_estimate(m, p, l, ampere);
  EXPECT_EQ(h.peak_allocated_bytes - a.peak_allocated_bytes, 2 * (33'554'432 - 8'519'680));
  // Without a device the ledger's line (sm90's) is replayed.
  EXPECT_EQ(gpu_estimate(m, p, l, GpuOptions{})->peak_allocated_bytes, h.peak_allocated_bytes);
  // And the stream allocates it as two workspaces of the size given.
  const gpu::EventStream s = gpu::alloc_events(m, p, l, {.cublas_workspace_bytes = 8'519'680});
  std::int64_t workspaces = 0;
  for (const gpu::AllocEvent& e : s.events) {
    if (e.op == gpu::Op::alloc && e.label >= 0 &&
        s.labels[static_cast<std::size_t>(e.label)].starts_with("cuBLAS workspaces")) {
      workspaces += e.count;
      EXPECT_EQ(e.bytes, 8'519'680);
    }
  }
  EXPECT_EQ(workspaces, 2);
}

// One epoch's steps: hand-checkable properties of the fixed shuffle.
TEST(EpochStepLengths, BatchesTheShuffledRecords) {
  const std::vector<std::int64_t> tokens = {5, 1, 9, 3, 7, 2, 8};
  // One record per step: the records themselves, in some order.
  std::vector<std::int64_t> one = epoch_step_lengths(tokens, 1, std::nullopt);
  std::vector<std::int64_t> sorted_one = one;
  std::sort(sorted_one.begin(), sorted_one.end());
  EXPECT_EQ(sorted_one, (std::vector<std::int64_t>{1, 2, 3, 5, 7, 8, 9}));
  EXPECT_EQ(one, epoch_step_lengths(tokens, 1, std::nullopt)) << "the same order every time";
  EXPECT_NE(one, tokens) << "shuffled";
  // Three per step: ceil(7 / 3) = 3 steps, each its longest record capped at max_length 6; the
  // step that holds the record of 9 is priced at 6.
  const std::vector<std::int64_t> three = epoch_step_lengths(tokens, 3, 6);
  ASSERT_EQ(three.size(), 3u);
  for (std::int64_t l : three) EXPECT_LE(l, 6);
  EXPECT_NE(std::find(three.begin(), three.end(), 6), three.end());
  // All records in one step: the longest, capped.
  EXPECT_EQ(epoch_step_lengths(tokens, 7, std::nullopt), std::vector<std::int64_t>{9});
  EXPECT_EQ(epoch_step_lengths(tokens, 100, 4), std::vector<std::int64_t>{4});
  // A record of no tokens trains on one; a long epoch stops at kRunSteps.
  EXPECT_EQ(epoch_step_lengths({0}, 1, std::nullopt), std::vector<std::int64_t>{1});
  EXPECT_EQ(std::ssize(epoch_step_lengths(std::vector<std::int64_t>(2000, 10), 2, std::nullopt)),
            kRunSteps);
}

}  // namespace
}  // namespace trainmem

// Sweeps: one point per value, priced by estimate(); memory grows with batch and with seq.

#include <gtest/gtest.h>

#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/solve.h"

namespace trainmem {
namespace {

TEST(Sweep, PointsMatchTheEstimatorAndGrow) {
  const auto m = load_preset("qwen3-1.7b");
  ASSERT_TRUE(m);
  TrainingPlan plan;
  plan.method = Method::lora;
  for (SweepAxis axis : {SweepAxis::batch, SweepAxis::seq}) {
    const std::vector<std::int64_t> values = default_sweep_values(axis, plan);
    ASSERT_GE(values.size(), 8U);
    const Sweep s = sweep(m.value(), plan, axis, values, std::nullopt);
    ASSERT_EQ(s.points.size(), values.size());
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      TrainingPlan p = plan;
      (axis == SweepAxis::batch ? p.batch : p.seq) = values[i];
      EXPECT_EQ(s.points[i].peak_bytes, peak_of(m.value(), p));
      EXPECT_LE(s.points[i].static_bytes, s.points[i].peak_bytes);
      if (i > 0) {
        EXPECT_GE(s.points[i].peak_bytes, s.points[i - 1].peak_bytes);
        EXPECT_EQ(s.points[i].static_bytes, s.points[0].static_bytes) << "static state is flat";
      }
    }
  }
}

TEST(Sweep, InvalidValuesAreSkipped) {
  const auto m = load_preset("qwen3-0.6b");
  ASSERT_TRUE(m);
  const Sweep s = sweep(m.value(), TrainingPlan{}, SweepAxis::batch, {0, 1, 2}, std::nullopt);
  ASSERT_EQ(s.points.size(), 2U);
  EXPECT_EQ(s.points.front().x, 1);
}

// GPT-2's learned position table has 1,024 rows: the estimate refuses a longer sequence, so a
// sweep has no point past it (it priced 8,192 tokens).
TEST(Sweep, NoPointPastALearnedPositionTable) {
  auto m = load_preset("gpt2");
  ASSERT_TRUE(m.ok());
  const Sweep s = sweep(*m, TrainingPlan{}, SweepAxis::seq, {512, 1024, 2048, 8192}, std::nullopt);
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points.back().x, 1024);
}

// A plan across GPUs is swept on its most-loaded rank, as estimate prices it (every point was
// priced on one GPU: ZeRO-3 over 8 GPUs read "no" at 122 GiB where the rank holds 27 GiB).
TEST(Sweep, ALayoutIsSweptOnItsMostLoadedRank) {
  auto m = load_preset("llama-3.1-8b");
  ASSERT_TRUE(m.ok());
  TrainingPlan p;
  p.seq = 4096;
  p.checkpointing = Checkpointing::full;
  p.layout.engine = Engine::deepspeed;
  p.layout.zero_stage = 3;
  p.layout.gpus_per_node = 8;
  const auto device = find_device("h100-sxm");
  ASSERT_TRUE(device.ok());
  const Sweep s = sweep(*m, p, SweepAxis::batch, {1, 2}, device.value());
  ASSERT_EQ(s.points.size(), 2u);
  for (const SweepPoint& pt : s.points) {
    TrainingPlan at = p;
    at.batch = pt.x;
    const DistributedEstimate d = estimate_distributed(*m, at);
    EXPECT_EQ(pt.peak_bytes, d.ranks[d.most_loaded].totals.peak_bytes);
    ASSERT_TRUE(pt.fit.has_value());
    EXPECT_EQ(pt.fit->peak_bytes, judge(*m, at, device.value()).peak_bytes);
    EXPECT_TRUE(pt.fit->fits);
  }
}

TEST(Sweep, AxisNames) {
  EXPECT_EQ(parse_sweep_axis("batch"), SweepAxis::batch);
  EXPECT_EQ(parse_sweep_axis("seq"), SweepAxis::seq);
  EXPECT_FALSE(parse_sweep_axis("both"));
}

}  // namespace
}  // namespace trainmem

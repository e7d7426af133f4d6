// Properties of the activation and phase model over presets and methods: memory never falls as
// batch or sequence grows; checkpointing never raises the peak; flash <= eager; chunked <= full
// loss; items sum to the totals.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

LoadedModel preset(const char* id) {
  auto m = load_preset(id);
  EXPECT_TRUE(m.ok()) << id;
  return m.value();
}

std::int64_t peak(const LoadedModel& m, const TrainingPlan& p) {
  return totals(estimate(m, p)).peak_bytes;
}

using Param = std::tuple<const char*, Method, Precision>;
class ActivationProperties : public ::testing::TestWithParam<Param> {
 protected:
  TrainingPlan plan() const {
    TrainingPlan p;
    p.method = std::get<1>(GetParam());
    p.precision = std::get<2>(GetParam());
    p.seq = 512;
    return p;
  }
};

TEST_P(ActivationProperties, MonotoneInBatchAndSequence) {
  const LoadedModel m = preset(std::get<0>(GetParam()));
  for (Checkpointing c : {Checkpointing::none, Checkpointing::full, Checkpointing::selective}) {
    TrainingPlan p = plan();
    p.checkpointing = c;
    std::int64_t last = 0;
    for (std::int64_t b : {1, 2, 3, 8}) {
      p.batch = b;
      const std::int64_t now = peak(m, p);
      EXPECT_GE(now, last) << "batch " << b;
      last = now;
    }
    p.batch = 1;
    last = 0;
    for (std::int64_t s : {64, 256, 1000, 4096}) {
      p.seq = s;
      const std::int64_t now = peak(m, p);
      EXPECT_GE(now, last) << "seq " << s;
      last = now;
    }
  }
}

TEST_P(ActivationProperties, CheckpointingNeverRaisesThePeak) {
  const LoadedModel m = preset(std::get<0>(GetParam()));
  for (Attention a : {Attention::eager, Attention::sdpa}) {
    TrainingPlan p = plan();
    p.attention = a;
    const std::int64_t none = peak(m, p);
    p.checkpointing = Checkpointing::selective;
    const std::int64_t selective = peak(m, p);
    p.checkpointing = Checkpointing::full;
    const std::int64_t full = peak(m, p);
    EXPECT_LE(selective, none);
    EXPECT_LE(full, none);
  }
}

TEST_P(ActivationProperties, FlashNoMoreThanEager) {
  const LoadedModel m = preset(std::get<0>(GetParam()));
  TrainingPlan p = plan();
  p.attention = Attention::eager;
  const std::int64_t eager = peak(m, p);
  p.attention = Attention::flash;
  EXPECT_LE(peak(m, p), eager);
  p.attention = Attention::sdpa;
  EXPECT_LE(peak(m, p), eager);
}

TEST_P(ActivationProperties, ChunkedAndFusedNoMoreThanFullLoss) {
  const LoadedModel m = preset(std::get<0>(GetParam()));
  TrainingPlan p = plan();
  p.batch = 4;
  const std::int64_t full = peak(m, p);
  p.loss = Loss::chunked;
  EXPECT_LE(peak(m, p), full);
  p.loss = Loss::fused;
  EXPECT_LE(peak(m, p), full);
}

TEST_P(ActivationProperties, ItemsSumToTotals) {
  const LoadedModel m = preset(std::get<0>(GetParam()));
  for (Checkpointing c : {Checkpointing::none, Checkpointing::full}) {
    TrainingPlan p = plan();
    p.checkpointing = c;
    p.grad_accum = c == Checkpointing::full ? 4 : 1;
    const Ledger l = estimate(m, p);
    const Totals t = totals(l);
    std::array<std::int64_t, kTenantCount> by{};
    std::array<std::int64_t, kPhaseSlots> slots{};
    for (const LedgerItem& i : l.items) {
      EXPECT_GE(i.bytes, 0) << i.label;
      by[static_cast<std::size_t>(i.tenant)] += i.bytes;
      for (int s = 0; s < kPhaseSlots; ++s) {
        if (i.live & (PhaseMask{1} << s)) slots[static_cast<std::size_t>(s)] += i.bytes;
      }
    }
    EXPECT_EQ(by, t.by_tenant);
    EXPECT_EQ(slots, t.by_slot);
    EXPECT_EQ(t.peak_bytes, *std::max_element(slots.begin(), slots.end()));
    EXPECT_EQ(t.peak_bytes, slots[static_cast<std::size_t>(t.peak_slot)]);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Presets, ActivationProperties,
    ::testing::Values(Param{"qwen3-0.6b", Method::full, Precision::bf16},
                      Param{"qwen3-8b", Method::lora, Precision::bf16_mixed},
                      Param{"llama-3.1-8b", Method::qlora, Precision::bf16_mixed},
                      Param{"qwen3-30b-a3b", Method::full, Precision::bf16_mixed},
                      Param{"gemma-2-9b", Method::full, Precision::autocast_bf16},
                      Param{"gpt2", Method::full, Precision::fp32},
                      Param{"phi-3-mini-4k-instruct", Method::lora, Precision::autocast_bf16},
                      Param{"mixtral-8x7b-v0.1", Method::lora, Precision::bf16},
                      Param{"deepseek-v3", Method::full, Precision::bf16}));

}  // namespace
}  // namespace trainmem

// The peak over the phases of a step: where it falls, what is live there, the first step versus
// the steady state, and gradient accumulation.
#include <gtest/gtest.h>

#include "trainmem/estimate.h"
#include "trainmem/load.h"

namespace trainmem {
namespace {

LoadedModel tiny() {
  auto m = load_model(std::string(TRAINMEM_SOURCE_DIR) + "/validation/configs/qwen3-tiny.json");
  EXPECT_TRUE(m.ok());
  return m.value();
}

int slot(int step, Phase p) {
  return step * kPhaseCount + static_cast<int>(p);
}

std::int64_t tenant_in(const Ledger& l, Tenant t, int s) {
  std::int64_t n = 0;
  for (const LedgerItem& i : l.items) {
    if (i.tenant == t && (i.live & (PhaseMask{1} << s))) n += i.bytes;
  }
  return n;
}

TEST(Phases, PeakAtBackwardStartOfTheSteadyState) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 128;
  const Ledger l = estimate(tiny(), p);
  const Totals t = totals(l);
  EXPECT_EQ(t.peak_slot, slot(1, Phase::backward_start));
  // No parameter gradient exists yet at the start of backward (grad_accum 1).
  EXPECT_EQ(tenant_in(l, Tenant::gradients, slot(1, Phase::backward_start)), 0);
  EXPECT_GT(tenant_in(l, Tenant::gradients, slot(1, Phase::backward)), 0);
  // Optimizer state is created by the first step() only.
  EXPECT_EQ(tenant_in(l, Tenant::optimizer_states, slot(0, Phase::backward_start)), 0);
  EXPECT_GT(tenant_in(l, Tenant::optimizer_states, slot(1, Phase::backward_start)), 0);
  // Saved activations are freed by the end of backward.
  EXPECT_LT(tenant_in(l, Tenant::activations, slot(1, Phase::end_of_backward)),
            tenant_in(l, Tenant::activations, slot(1, Phase::backward_start)) / 100);
}

TEST(Phases, GradientAccumulationKeepsGradientsAtBackwardStart) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.grad_accum = 4;
  const Ledger l = estimate(tiny(), p);
  EXPECT_GT(tenant_in(l, Tenant::gradients, slot(1, Phase::backward_start)), 0);
  EXPECT_GT(tenant_in(l, Tenant::gradients, slot(1, Phase::forward)), 0);
}

TEST(Phases, OptimizerStepScratchOnlyInTheStep) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.optimizer_impl = OptimizerImpl::foreach;
  const Ledger l = estimate(tiny(), p);
  for (const LedgerItem& i : l.items) {
    if (i.label.rfind("Optimizer step scratch", 0) != 0) continue;
    EXPECT_EQ(i.live, phase_bit(0, Phase::optimizer_step) | phase_bit(1, Phase::optimizer_step));
  }
}

TEST(Phases, OverheadIsItsOwnTenant) {
  const Ledger l = estimate(tiny(), TrainingPlan{});
  EXPECT_EQ(totals(l).by_tenant[static_cast<std::size_t>(Tenant::overhead)], 64LL << 20);
}

}  // namespace
}  // namespace trainmem

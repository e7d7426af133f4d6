// Random extreme plans (issue 14): over models with dimensions up to 2^40, up to 4,096 layers and
// plans up to the validate() limits, every figure trainmem prints is non-negative and exact, the
// peak never falls as batch or sequence grows, and a plan whose figures do not fit 64 bits is
// refused up front (check_plan_size) and never "fits" any device. Seeded, so a failure repeats.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "util/checked.h"

namespace trainmem {
namespace {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  // Log-uniform in [1, 2^max_log2].
  std::int64_t log_uniform(int max_log2) {
    const int bits = std::uniform_int_distribution<int>(0, max_log2)(gen_);
    const std::int64_t lo = std::int64_t{1} << bits;
    // lo + (lo - 1): the top of the octave without computing 2^63 when bits is 62.
    return std::uniform_int_distribution<std::int64_t>(lo, lo + (lo - 1))(gen_) >>
           (bits == max_log2);
  }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(gen_); }
  bool coin() { return pick(2) == 0; }

 private:
  std::mt19937_64 gen_;
};

ModelSpec random_spec(Rng& r, const ModelSpec& base) {
  ModelSpec s = base;
  s.heads = std::int64_t{1} << r.pick(9);
  s.kv_heads = s.heads >> r.pick(static_cast<int>(std::log2(static_cast<double>(s.heads))) + 1);
  s.head_dim = std::int64_t{1} << (2 + r.pick(12));
  s.hidden = s.heads * s.head_dim;
  s.intermediate = r.log_uniform(40);
  s.vocab = r.log_uniform(40);
  s.layers = std::min(r.log_uniform(12), kMaxLayers);
  s.max_positions = 1024;
  s.moe = MoeSpec{};
  if (r.pick(4) == 0) {
    s.moe.experts = std::int64_t{1} << r.pick(11);
    s.moe.top_k = 1 + r.pick(static_cast<int>(std::min<std::int64_t>(s.moe.experts, 16)));
    s.moe.expert_intermediate = r.log_uniform(30);
  }
  return s;
}

TrainingPlan random_plan(Rng& r) {
  TrainingPlan p;
  p.method = static_cast<Method>(r.pick(4));
  if (p.method == Method::freeze) p.freeze.train_modules = {"q", "norm"};
  p.precision = static_cast<Precision>(r.pick(5));
  p.optimizer = static_cast<OptimizerKind>(r.pick(10));
  p.checkpointing = static_cast<Checkpointing>(r.pick(3));
  p.attention = static_cast<Attention>(r.pick(3));
  p.loss = static_cast<Loss>(r.pick(3));
  p.convention = static_cast<Convention>(r.pick(2));
  p.batch = r.log_uniform(20);
  p.seq = r.log_uniform(24);
  p.lora.rank = r.log_uniform(16);
  if (r.pick(5) == 0) p.params_override = r.log_uniform(62);
  return p;
}

void expect_exact(const Ledger& l, const char* what) {
  for (const LedgerItem& i : l.items) {
    ASSERT_GE(i.bytes, 0) << what << ": " << i.label << " = " << i.formula;
    ASSERT_FALSE(is_saturated(i.bytes)) << what << ": " << i.label;
  }
  const Totals t = totals(l);
  ASSERT_FALSE(t.overflow) << what;
  ASSERT_GE(t.peak_bytes, 0) << what;
  ASSERT_GE(t.static_bytes, 0) << what;
}

TEST(ExtremePlans, FiguresExactMonotoneAndNeverFalselyFitting) {
  Rng rng(14);
  const LoadedModel dense = load_preset("qwen2.5-1.5b").value();
  const Device biggest = list_devices().back();
  int priced = 0, refused = 0;
  for (int iteration = 0; iteration < 600; ++iteration) {
    const ModelSpec spec = random_spec(rng, dense.spec);
    const LoadedModel model = model_from_spec(spec, SourceKind::preset, "random");
    const TrainingPlan plan = random_plan(rng);
    if (validate(plan)) continue;
    const std::string what =
        fmt::format("iteration {} (layers {}, hidden {}, vocab {}, batch {}, seq {})", iteration,
                    spec.layers, spec.hidden, spec.vocab, plan.batch, plan.seq);
    if (check_plan_size(model, plan)) {
      ++refused;
      // Refused up front: the solver's peak is saturated and fits nothing.
      EXPECT_TRUE(is_saturated(peak_of(model, plan))) << what;
      EXPECT_FALSE(fit(peak_of(model, plan), biggest).fits) << what;
      continue;
    }
    ++priced;
    const Ledger ledger = estimate(model, plan);
    expect_exact(ledger, what.c_str());
    const std::int64_t peak = totals(ledger).peak_bytes;
    for (bool by_batch : {true, false}) {
      TrainingPlan bigger = plan;
      (by_batch ? bigger.batch : bigger.seq) *= 2;
      if (validate(bigger) || check_plan_size(model, bigger)) continue;
      const Ledger l2 = estimate(model, bigger);
      expect_exact(l2, what.c_str());
      EXPECT_GE(totals(l2).peak_bytes, peak) << what << (by_batch ? " batch x2" : " seq x2");
    }
  }
  // Both branches are exercised, so the property says something about each.
  EXPECT_GT(priced, 50);
  EXPECT_GT(refused, 50);
}

TEST(ExtremePlans, SaturatedLineMeansOverflowAndNoFit) {
  Ledger l;
  l.items.push_back(LedgerItem{.id = "weights.w",
                               .tenant = Tenant::weights,
                               .label = "w",
                               .bytes = kSaturated,
                               .formula = "",
                               .source = "",
                               .live = kAllPhases,
                               .estimated = false});
  l.items.push_back(LedgerItem{.id = "activations.a",
                               .tenant = Tenant::activations,
                               .label = "a",
                               .bytes = 1000,
                               .formula = "",
                               .source = "",
                               .live = kAllPhases,
                               .estimated = false});
  const Totals t = totals(l);
  EXPECT_TRUE(t.overflow);
  EXPECT_TRUE(is_saturated(t.peak_bytes));  // the sum saturates instead of wrapping negative
  EXPECT_FALSE(fit(t, custom_device(std::int64_t{1} << 62)).fits);
}

TEST(ExtremePlans, ParamsPast2To52AreRefusedWithTheFigureNamed) {
  const LoadedModel m = load_preset("qwen2.5-1.5b").value();
  TrainingPlan p;
  p.params_override = 600'000'000'000'000'000;  // 6e17: 16 B/param would wrap int64
  const auto e = check_plan_size(m, p);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->reason.find("--params"), std::string::npos) << e->reason;
  EXPECT_NE(e->reason.find("8 EiB"), std::string::npos) << e->reason;
}

// The fuzz finding of stop 18 (tests/fuzz/corpus/estimate/lora-rank-wider-than-model): a width-1
// model with LoRA rank 40607 at 1e13 tokens saves tokens x rank per adapted linear, 4e17
// elements, which no width figure bounded; the rank now has its own figure.
TEST(ExtremePlans, LoraRankWiderThanTheModelIsRefusedWithTheFigureNamed) {
  ModelSpec s;
  s.name = "tiny";
  s.model_type = "llama";
  s.heads = s.kv_heads = s.head_dim = s.hidden = s.intermediate = s.vocab = s.layers = 1;
  s.max_positions = 1024;
  const LoadedModel m = model_from_spec(s, SourceKind::preset, "tiny");
  TrainingPlan p;
  p.method = Method::qlora;
  p.lora.rank = 40607;
  p.batch = 958111;
  p.seq = 10395295;
  const auto e = check_plan_size(m, p);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->reason.find("tokens x rank x layers"), std::string::npos) << e->reason;
  // tokens x 1 x 1 = 1e13 elements: inside 2^52, priced exactly (flash attention, so no
  // batch x seq x seq mask figure).
  p.attention = Attention::flash;
  p.lora.rank = 1;
  EXPECT_FALSE(check_plan_size(m, p).has_value());
  for (const LedgerItem& i : estimate(m, p).items) ASSERT_GE(i.bytes, 0) << i.label;
}

}  // namespace
}  // namespace trainmem

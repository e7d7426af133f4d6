// Seeds 000 and 004: every static-state number, in the textbook convention, to the digits the
// seeds print (../shared/seed-vectors.md).
#include <gtest/gtest.h>

#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

Totals textbook(const char* preset, std::int64_t params,
                OptimizerKind optimizer = OptimizerKind::adamw) {
  auto model = load_preset(preset);
  EXPECT_TRUE(model.ok());
  TrainingPlan plan;
  plan.convention = Convention::textbook;
  plan.params_override = params;
  plan.optimizer = optimizer;
  return totals(estimate(model.value(), plan));
}

std::int64_t tenant(const Totals& t, Tenant x) {
  return t.by_tenant[static_cast<std::size_t>(x)];
}

TEST(Seed000, Qwen25_1_5B_StaticState) {
  const Totals t = textbook("qwen2.5-1.5b", 1'540'000'000);
  EXPECT_EQ(tenant(t, Tenant::weights), 3'080'000'000);    // 3.08 GB
  EXPECT_EQ(tenant(t, Tenant::gradients), 3'080'000'000);  // 3.08 GB
  // Optimizer tenant in the seed: fp32 master + m + v = 18.48 GB.
  EXPECT_EQ(tenant(t, Tenant::optimizer_states) + tenant(t, Tenant::master_weights),
            18'480'000'000);
  EXPECT_EQ(t.static_bytes, 24'640'000'000);                    // 24.64 GB
  EXPECT_NEAR(in_unit(t.static_bytes, Unit::gib), 22.9, 0.05);  // "= 22.9 GiB"
}

TEST(Seed000, EightBitOptimizerAbout15_4GB) {
  const Totals t = textbook("qwen2.5-1.5b", 1'540'000'000, OptimizerKind::adamw_8bit);
  EXPECT_NEAR(static_cast<double>(t.static_bytes) / 1e9, 15.4, 0.05);
}

TEST(Seed000, Qwen25_7B_About122GB) {
  // "Qwen2.5-7B static: about 122 GB full" at 16 B/param on its published 7.61B.
  auto model = load_preset("qwen2.5-7b");
  ASSERT_TRUE(model.ok());
  TrainingPlan plan;
  plan.convention = Convention::textbook;
  const Totals t = totals(estimate(model.value(), plan));
  EXPECT_NEAR(static_cast<double>(t.static_bytes) / 1e9, 122, 0.5);
}

TEST(Seed000, GbToGibOn32GBCard) {
  EXPECT_NEAR(in_unit(32 * kGB, Unit::gib), 29.8, 0.005);
}

TEST(Seed004, SevenBillionMixedPrecisionAdam) {
  const Totals t = textbook("qwen2.5-7b", 7'000'000'000);
  EXPECT_EQ(tenant(t, Tenant::weights), 14'000'000'000);
  EXPECT_EQ(tenant(t, Tenant::gradients), 14'000'000'000);
  EXPECT_EQ(tenant(t, Tenant::optimizer_states) + tenant(t, Tenant::master_weights),
            84'000'000'000);
  EXPECT_EQ(tenant(t, Tenant::optimizer_states), 56'000'000'000);  // Adam moments alone
  EXPECT_EQ(t.static_bytes, 112'000'000'000);
  EXPECT_GT(t.static_bytes, 80 * kGB);  // does not fit an 80 GB GPU
}

}  // namespace
}  // namespace trainmem

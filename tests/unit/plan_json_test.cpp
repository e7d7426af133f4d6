// Plans written as JSON read back unchanged; bad plan JSON names the key and the reason.
#include <gtest/gtest.h>

#include <utility>

#include "trainmem/plan.h"

namespace trainmem {
namespace {

bool same(const TrainingPlan& a, const TrainingPlan& b) {
  return render_plan_json(a) == render_plan_json(b);
}

TEST(PlanJson, DefaultsRoundTrip) {
  auto back = plan_from_json(render_plan_json(TrainingPlan{}));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(same(*back, TrainingPlan{}));
}

TEST(PlanJson, EveryFieldRoundTrips) {
  TrainingPlan p;
  p.method = Method::qlora;
  p.precision = Precision::autocast_bf16;
  p.optimizer = OptimizerKind::paged_adamw_8bit;
  p.optimizer_impl = OptimizerImpl::fused;
  p.lora = {.rank = 64, .alpha = 128, .dropout = 0.05, .targets = {"q", "v"}, .dora = true};
  p.quant = {
      .kind = QuantKind::fp4, .double_quant = false, .block_size = 128, .prepare_kbit = false};
  p.freeze = {.train_modules = {"o"}, .train_layers = {0, 3}};
  p.batch = 3;
  p.seq = 777;
  p.grad_accum = 5;
  p.checkpointing = Checkpointing::full;
  p.attention = Attention::eager;
  p.loss = Loss::chunked;
  p.convention = Convention::exact;
  p.params_override = 0;
  auto back = plan_from_json(render_plan_json(p));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(same(*back, p)) << render_plan_json(*back);
  EXPECT_EQ(back->lora.rank, 64);
  EXPECT_EQ(back->freeze.train_layers, (std::vector<std::int64_t>{0, 3}));
  EXPECT_DOUBLE_EQ(back->lora.dropout, 0.05);
}

TEST(PlanJson, EvaluationRoundTripsAndIsAbsentByDefault) {
  EXPECT_EQ(render_plan_json(TrainingPlan{}).find("eval_"), std::string::npos);
  for (const auto& [strategy, batch] : {std::pair{EvalStrategy::steps, std::int64_t{8}},
                                        std::pair{EvalStrategy::epoch, std::int64_t{2}},
                                        std::pair{EvalStrategy::no, std::int64_t{3}}}) {
    TrainingPlan p;
    p.eval_strategy = strategy;
    p.eval_batch = batch;
    const std::string text = render_plan_json(p);
    EXPECT_NE(text.find("\"eval_strategy\""), std::string::npos) << text;
    auto back = plan_from_json(text);
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(back->eval_strategy, strategy);
    EXPECT_EQ(back->eval_batch, batch);
  }
  auto bad = plan_from_json(R"({"eval_strategy": "sometimes"})", "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "eval_strategy");
  auto zero = plan_from_json(R"({"eval_batch": 0})", "plan.json");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().field, "eval_batch");
}

TEST(PlanJson, MissingKeysKeepDefaults) {
  auto p = plan_from_json(R"({"batch": 4, "lora": {"rank": 8}})");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->batch, 4);
  EXPECT_EQ(p->lora.rank, 8);
  EXPECT_EQ(p->seq, TrainingPlan{}.seq);
  EXPECT_EQ(p->lora.targets, TrainingPlan{}.lora.targets);
}

struct BadPlan {
  const char* json;
  const char* field;
  const char* reason;
};

class PlanJsonErrors : public ::testing::TestWithParam<BadPlan> {};

TEST_P(PlanJsonErrors, NameTheKey) {
  auto p = plan_from_json(GetParam().json, "plan.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().file, "plan.json");
  EXPECT_EQ(p.error().field, GetParam().field) << p.error().message();
  EXPECT_NE(p.error().message().find(GetParam().reason), std::string::npos) << p.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlanJsonErrors,
    ::testing::Values(BadPlan{R"({"bacth": 2})", "bacth", "not a plan field"},
                      BadPlan{R"({"lora": {"rnak": 2}})", "lora.rnak", "not a plan field"},
                      BadPlan{R"({"batch": "2"})", "batch", "must be an integer"},
                      BadPlan{R"({"batch": 2.5})", "batch", "must be an integer"},
                      BadPlan{R"({"method": "lorra"})", "method", "not a known name"},
                      BadPlan{R"({"lora": {"dropout": "x"}})", "lora.dropout", "finite number"},
                      BadPlan{R"({"lora": 3})", "lora", "must be an object"},
                      BadPlan{R"({"lora": {"targets": [1]}})", "lora.targets", "list of strings"},
                      BadPlan{R"([1, 2])", "", "JSON object"},
                      BadPlan{R"({"batch": )", "", "not valid JSON"}),
    [](const ::testing::TestParamInfo<BadPlan>& param_info) {
      return "case" + std::to_string(param_info.index);
    });

TEST(PlanJson, ValidatesTheResult) {
  auto p = plan_from_json(R"({"batch": 0})");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("batch"), std::string::npos);
}

}  // namespace
}  // namespace trainmem

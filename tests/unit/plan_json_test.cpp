// Plans written as JSON read back unchanged; bad plan JSON names the key and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "plan/framework.h"
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
  p.lora = {.rank = 64,
            .alpha = 128,
            .dropout = 0.05,
            .targets = {"q", "v"},
            .dora = true,
            .modules_to_save = {"embed"}};
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

TrainingPlan planned(const PlanPatch& patch) {
  auto r = plan_from(patch);
  EXPECT_TRUE(r.ok()) << r.error().message();
  return r.value().plan;
}

std::vector<std::int64_t> knob_values(const FrameworkBehaviour& b) {
  std::vector<std::int64_t> out;
  for (const KnobInfo& k : knobs()) out.push_back(k.get(b));
  return out;
}

// A plan priced under a framework profile, with a version and a switch the profile does not set,
// reads back with the same behaviour: what Python and `--plan` files price is what was planned.
TEST(PlanJson, FrameworkVersionsAndSwitchesRoundTrip) {
  const TrainingPlan p = planned({{"framework", "litgpt", "--framework"},
                                  {"method", "qlora", "--method"},
                                  {"versions", "bitsandbytes=0.42.0", "--versions"},
                                  {"padding_mask", "true", "--padding-mask"}});
  ASSERT_TRUE(p.behaviour.padding_mask);
  ASSERT_TRUE(p.behaviour.bnb_saves_4bit_input);  // bitsandbytes < 0.43.2
  const std::string text = render_plan_json(p);
  EXPECT_NE(text.find("\"padding_mask\": true"), std::string::npos) << text;
  EXPECT_NE(text.find("\"bitsandbytes\": \"0.42.0\""), std::string::npos) << text;
  auto back = plan_from_json(text);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->framework, "litgpt");
  EXPECT_EQ(knob_values(back->behaviour), knob_values(p.behaviour));
  EXPECT_TRUE(same(*back, p));
}

// "framework" alone brings the profile's behaviour (it was read as a bare string before, and the
// plan priced as hf).
TEST(PlanJson, AFrameworkNameBringsItsProfile) {
  auto back = plan_from_json(R"({"framework": "litgpt"})");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(back->behaviour.fp32_logits_in_model);
  EXPECT_TRUE(back->behaviour.unties_embeddings);
  EXPECT_FALSE(back->behaviour.loss_upcast);
  EXPECT_EQ(knob_values(back->behaviour),
            knob_values(planned({{"framework", "litgpt", "-"}}).behaviour));
}

TEST(PlanJson, ALayoutRoundTripsAndIsAbsentOnOneGpu) {
  EXPECT_EQ(render_plan_json(TrainingPlan{}).find("\"layout\""), std::string::npos);
  TrainingPlan p;
  p.layout.engine = Engine::deepspeed;
  p.layout.zero_stage = 3;
  p.layout.gpus_per_node = 8;
  p.layout.deepspeed.overlap_comm = false;
  p.layout.deepspeed.reduce_bucket_size = 200'000'000;
  p.layout.fsdp_knobs.forward_prefetch = true;
  auto back = plan_from_json(render_plan_json(p));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->layout.zero_stage, 3);
  EXPECT_EQ(back->layout.gpus_per_node, 8);
  EXPECT_EQ(back->layout.deepspeed.overlap_comm, std::optional<bool>(false));
  EXPECT_EQ(back->layout.deepspeed.reduce_bucket_size, 200'000'000);
  EXPECT_TRUE(back->layout.fsdp_knobs.forward_prefetch);
  EXPECT_TRUE(same(*back, p));
}

// A layout without "engine" takes the one the command line's flags imply: --tp 2 alone is
// Megatron-LM's, 8 GPUs alone DDP; a named engine stays.
TEST(PlanJson, ALayoutWithoutAnEngineTakesTheImpliedOne) {
  auto tp = plan_from_json(R"({"layout": {"gpus_per_node": 8, "tp": 2}})");
  ASSERT_TRUE(tp.ok()) << tp.error().message();
  EXPECT_EQ(tp->layout.engine, Engine::megatron);
  auto dp = plan_from_json(R"({"layout": {"gpus_per_node": 8}})");
  ASSERT_TRUE(dp.ok()) << dp.error().message();
  EXPECT_EQ(dp->layout.engine, Engine::ddp);
  auto named = plan_from_json(R"({"layout": {"gpus_per_node": 8, "engine": "fsdp", "tp": 2}})");
  ASSERT_TRUE(named.ok()) << named.error().message();
  EXPECT_EQ(named->layout.engine, Engine::fsdp);
}

TEST(PlanJson, SeparateFsdp2UnitsRoundTripAndNeedFsdp2) {
  TrainingPlan p;
  p.layout.engine = Engine::fsdp;
  p.layout.gpus_per_node = 8;
  p.layout.fsdp_knobs.head_unit = true;
  auto back = plan_from_json(render_plan_json(p));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(back->layout.fsdp_knobs.head_unit);
  EXPECT_FALSE(back->layout.fsdp_knobs.embedding_unit);
  p.layout.fsdp_version = 1;  // FSDP1 wraps flat parameters: no such units
  EXPECT_FALSE(plan_from_json(render_plan_json(p)).ok());
}

TEST(PlanJson, CpuKernelsRoundTrip) {
  TrainingPlan p;
  p.cpu_kernels = true;
  auto back = plan_from_json(render_plan_json(p));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(back->cpu_kernels);
}

TEST(PlanJson, AllocConfRoundTripsAndIsChecked) {
  TrainingPlan p;
  EXPECT_EQ(render_plan_json(p).find("alloc_conf"), std::string::npos);  // absent by default
  p.alloc_conf = "expandable_segments:True,max_split_size_mb:128";
  auto back = plan_from_json(render_plan_json(p));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->alloc_conf, p.alloc_conf);
  auto bad = plan_from_json(R"({"alloc_conf": "max_split_size_mb:5"})", "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "alloc_conf");
  EXPECT_NE(bad.error().reason.find("max_split_size_mb"), std::string::npos)
      << bad.error().message();
}

// Every knob in the table has its own name, and set then get returns the value.
TEST(Knobs, EachHasANameAndSetsWhatItReads) {
  std::vector<std::string_view> names;
  for (const KnobInfo& k : knobs()) {
    EXPECT_EQ(knob_name(k.knob), k.name);
    EXPECT_EQ(std::count(names.begin(), names.end(), k.name), 0) << k.name;
    names.push_back(k.name);
    FrameworkBehaviour b;
    const std::int64_t v = k.kind == KnobKind::count  ? 7
                           : k.kind == KnobKind::flag ? 1 - k.get(b)
                                                      : 2;
    set_knob(b, k.knob, v);
    EXPECT_EQ(k.get(b), v) << k.name;
  }
  EXPECT_EQ(name_of(LoadQuantiser::torchao_chunked), "torchao_chunked");
  EXPECT_EQ(parse_load_quantiser("lightning_bnb"), LoadQuantiser::lightning_bnb);
  EXPECT_FALSE(parse_load_quantiser("bnb").has_value());
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
    ::testing::Values(
        BadPlan{R"({"bacth": 2})", "bacth", "not a plan field"},
        BadPlan{R"({"lora": {"rnak": 2}})", "lora.rnak", "not a plan field"},
        BadPlan{R"({"batch": "2"})", "batch", "must be an integer"},
        BadPlan{R"({"batch": 2.5})", "batch", "must be an integer"},
        BadPlan{R"({"method": "lorra"})", "method", "not a known name"},
        BadPlan{R"({"lora": {"dropout": "x"}})", "lora.dropout", "finite number"},
        BadPlan{R"({"lora": 3})", "lora", "must be an object"},
        BadPlan{R"({"lora": {"targets": [1]}})", "lora.targets", "list of strings"},
        BadPlan{R"({"framework": "deepspeed"})", "framework", "litgpt"},
        BadPlan{R"({"framework": 3})", "framework", "must be a string"},
        BadPlan{R"({"library_versions": {"torch": "2.4"}})", "library_versions.torch",
                "not a library"},
        BadPlan{R"({"library_versions": {"bitsandbytes": 0.42}})", "library_versions.bitsandbytes",
                "version string"},
        BadPlan{R"({"behaviour": {"padding": true}})", "behaviour.padding",
                "not a framework behaviour"},
        BadPlan{R"({"behaviour": {"padding_mask": 1}})", "behaviour.padding_mask", "true or false"},
        BadPlan{R"({"behaviour": {"loss_chunks": -2}})", "behaviour.loss_chunks",
                "0 to 1,000,000,000"},
        BadPlan{R"({"behaviour": {"loss_chunk_positions": 9223372036854775807}})",
                "behaviour.loss_chunk_positions", "0 to 1,000,000,000"},
        BadPlan{R"({"behaviour": {"load_quantiser": "bnb"}})", "behaviour.load_quantiser",
                "lightning_bnb"},
        BadPlan{R"({"layout": {"tpp": 2}})", "layout.tpp", "not a plan field"},
        BadPlan{R"({"layout": {"deepspeed": {"overlap_comm": 1}}})",
                "layout.deepspeed.overlap_comm", "true, false or null"},
        BadPlan{R"({"layout": {"zero_stage": 9999999999}})", "layout.zero_stage", "out of range"},
        BadPlan{R"([1, 2])", "", "JSON object"}, BadPlan{R"({"batch": )", "", "not valid JSON"}),
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

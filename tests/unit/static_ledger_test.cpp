// The static state (weights + gradients + optimizer states + master weights) for each method and
// optimizer, in both conventions, against hand-computed bytes; and the properties the design
// promises: LoRA < full, QLoRA < LoRA, adamw-8bit < adamw, items sum to totals.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
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

struct Case {
  const char* name;
  const char* preset;
  Method method;
  OptimizerKind optimizer;
  Convention convention;
  std::int64_t params_override;
  std::int64_t static_bytes;
};

constexpr auto kTb = Convention::textbook;
constexpr auto kEx = Convention::exact;
constexpr std::int64_t k8bAdapter = 43'646'976;     // Qwen3-8B r = 16, seven projections
constexpr std::int64_t k8bTotal = 8'190'735'360;    // Qwen3-8B exact count
constexpr std::int64_t kSeed000 = 1'540'000'000;    // --params 1.54e9
constexpr std::int64_t k8bitState = 1'564'062'500;  // 1.54e9 + 1.54e9 / 256 x 4, per state

const Case kCases[] = {
    // Seed 000: 16 B/param = 24.64 GB.
    {"seed000_full", "qwen2.5-1.5b", Method::full, OptimizerKind::adamw, kTb, kSeed000,
     24'640'000'000},
    // Seed 000: 8-bit Adam, 2 + 2 + 4 + 2 x (1 + 4/256) B/param: about 15.4 GB.
    {"seed000_8bit", "qwen2.5-1.5b", Method::full, OptimizerKind::adamw_8bit, kTb, kSeed000,
     8 * kSeed000 + 2 * k8bitState},
    // Seed 004: 7e9 x 16 = 112 GB.
    {"seed004_full", "qwen2.5-7b", Method::full, OptimizerKind::adamw, kTb, 7'000'000'000,
     112'000'000'000},
    // Seed 001: Qwen3-1.7B full 27.2 GB, Qwen3-8B full 131.2 GB.
    {"seed001_1p7b_full", "qwen3-1.7b", Method::full, OptimizerKind::adamw, kTb, 0, 27'200'000'000},
    {"seed001_8b_full", "qwen3-8b", Method::full, OptimizerKind::adamw, kTb, 0, 131'200'000'000},
    // Seed 001: Qwen3-8B LoRA = 8.2e9 x 2 + adapter x 16 = 17.1 GB.
    {"seed001_8b_lora", "qwen3-8b", Method::lora, OptimizerKind::adamw, kTb, 0,
     16'400'000'000 + k8bAdapter * 16},
    // Seed 001: Qwen3-8B QLoRA = 8.2e9 x 0.55 + adapter x 16 = 5.21 GB.
    {"seed001_8b_qlora", "qwen3-8b", Method::qlora, OptimizerKind::adamw, kTb, 0,
     4'510'000'000 + k8bAdapter * 16},
    // Seed 001: Qwen3-30B-A3B QLoRA = 30.5e9 x 0.55 + 32,243,712 x 16 = 17.29 GB.
    {"seed001_30b_qlora", "qwen3-30b-a3b", Method::qlora, OptimizerKind::adamw, kTb, 0,
     16'775'000'000 + 32'243'712LL * 16},
    // Exact full: 16 B per exact param.
    {"exact_8b_full", "qwen3-8b", Method::full, OptimizerKind::adamw, kEx, 0, k8bTotal * 16},
    // Exact LoRA: frozen bf16 base + fp32 adapter (4 weight + 4 grad + 8 Adam, no master).
    {"exact_8b_lora", "qwen3-8b", Method::lora, OptimizerKind::adamw, kEx, 0,
     k8bTotal * 2 + k8bAdapter * 16},
    // Exact LoRA with SGD: 4 + 4.
    {"exact_8b_lora_sgd", "qwen3-8b", Method::lora, OptimizerKind::sgd, kEx, 0,
     k8bTotal * 2 + k8bAdapter * 8},
    // Exact LoRA with Lion / momentum: 4 + 4 + 4.
    {"exact_8b_lora_lion", "qwen3-8b", Method::lora, OptimizerKind::lion, kEx, 0,
     k8bTotal * 2 + k8bAdapter * 12},
    // Exact full with SGD: bf16 weights + grads + fp32 master, no state: 8 B/param.
    {"exact_8b_full_sgd", "qwen3-8b", Method::full, OptimizerKind::sgd, kEx, 0, k8bTotal * 8},
};

class StaticState : public ::testing::TestWithParam<Case> {};

TEST_P(StaticState, HandComputedBytes) {
  const Case& c = GetParam();
  TrainingPlan p;
  p.method = c.method;
  p.optimizer = c.optimizer;
  p.convention = c.convention;
  p.params_override = c.params_override;
  const Totals t = totals(estimate(preset(c.preset), p));
  EXPECT_EQ(t.static_bytes, c.static_bytes) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Table, StaticState, ::testing::ValuesIn(kCases),
                         [](const auto& p) { return std::string(p.param.name); });

Totals run(const char* id, Method method, OptimizerKind opt, Convention convention) {
  TrainingPlan p;
  p.method = method;
  p.optimizer = opt;
  p.convention = convention;
  return totals(estimate(preset(id), p));
}

class Properties : public ::testing::TestWithParam<std::tuple<const char*, Convention>> {};

TEST_P(Properties, CheaperMethodsAndOptimizersCostLess) {
  const auto [id, convention] = GetParam();
  const auto full = run(id, Method::full, OptimizerKind::adamw, convention).static_bytes;
  const auto lora = run(id, Method::lora, OptimizerKind::adamw, convention).static_bytes;
  const auto qlora = run(id, Method::qlora, OptimizerKind::adamw, convention).static_bytes;
  const auto adam8 = run(id, Method::full, OptimizerKind::adamw_8bit, convention).static_bytes;
  const auto paged = run(id, Method::full, OptimizerKind::paged_adamw, convention).static_bytes;
  EXPECT_LT(lora, full);
  // Except the fused experts of an MoE on transformers 5, which stay unquantised and are upcast
  // to fp32 (Qlora.RoutedExpertsByTransformersVersionAndFramework).
  if (preset(id).spec.moe.experts == 0 || convention == Convention::textbook) {
    EXPECT_LT(qlora, lora);
  }
  EXPECT_LT(adam8, full);
  // Paging moves a spike; it does not shrink the steady state.
  EXPECT_EQ(paged, full);
}

TEST_P(Properties, ItemsSumToTotals) {
  const auto [id, convention] = GetParam();
  for (Method m : {Method::full, Method::lora, Method::qlora}) {
    TrainingPlan p;
    p.method = m;
    p.convention = convention;
    const Ledger l = estimate(preset(id), p);
    const Totals t = totals(l);
    std::int64_t sum = 0;
    for (const LedgerItem& i : l.items) sum += i.bytes;
    std::int64_t by = 0;
    for (std::int64_t b : t.by_tenant) by += b;
    EXPECT_EQ(sum, by);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Properties,
                         ::testing::Combine(::testing::Values("qwen3-0.6b", "qwen3-8b",
                                                              "qwen3-30b-a3b", "llama-3.1-8b",
                                                              "phi-3-mini-4k-instruct", "gpt2"),
                                            ::testing::Values(kEx, kTb)),
                         [](const auto& param_info) {
                           std::string name = std::get<0>(param_info.param);
                           name += std::get<1>(param_info.param) == kEx ? "_exact" : "_textbook";
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(StaticState, QloraPrepareKbitIsItsOwnLine) {
  TrainingPlan p;
  p.method = Method::qlora;
  const Ledger l = estimate(preset("qwen3-8b"), p);
  std::int64_t upcast = 0;
  for (const LedgerItem& i : l.items) {
    if (i.label.find("prepare_model_for_kbit_training") != std::string::npos) upcast = i.bytes;
  }
  // Embedding + lm_head (2 x 151,936 x 4096) + norms (308,224), 2 extra bytes each.
  EXPECT_EQ(upcast, (2 * 151'936LL * 4096 + 308'224) * 2);
  p.quant.prepare_kbit = false;
  for (const LedgerItem& i : estimate(preset("qwen3-8b"), p).items) {
    EXPECT_EQ(i.label.find("prepare_model_for_kbit_training"), std::string::npos);
  }
}

TEST(StaticState, FreezeTrainsOnlyChosenLayersAndModules) {
  TrainingPlan p;
  p.method = Method::freeze;
  p.freeze.train_layers = {35};
  const LoadedModel m = preset("qwen3-8b");
  // One decoder layer of Qwen3-8B: (6,946,075,648 - 4,096) / 36.
  EXPECT_EQ(estimate(m, p).model.params_trainable, 192'946'432);
  p.freeze.train_layers = {};
  p.freeze.train_modules = {"norm"};
  EXPECT_EQ(estimate(m, p).model.params_trainable, 308'224);
  p.freeze.train_modules = {"lm_head"};
  EXPECT_EQ(estimate(m, p).model.params_trainable, 151'936LL * 4096);
  p.freeze.train_modules = {"q"};
  p.freeze.train_layers = {0, 1};
  EXPECT_EQ(estimate(m, p).model.params_trainable, 2 * 4096LL * 4096);
}

TEST(StaticState, Seed000LoraIsAboutFourGigabytes) {
  // Seed 000: "LoRA static state about 4 GB": a frozen 2 B/param base (3.08 GB) + a small adapter
  // (Qwen2.5-1.5B, r = 16, seven projections: 18,464,768 x 16 B).
  TrainingPlan p;
  p.method = Method::lora;
  p.convention = Convention::textbook;
  p.params_override = 1'540'000'000;
  const Totals t = totals(estimate(preset("qwen2.5-1.5b"), p));
  EXPECT_EQ(t.static_bytes, 3'080'000'000 + 18'464'768LL * 16);
}

TEST(StaticState, TextbookFreezePricesTrainedPartAt16Bytes) {
  TrainingPlan p;
  p.method = Method::freeze;
  p.convention = Convention::textbook;
  p.freeze.train_modules = {"norm"};
  // Qwen3-8B: 308,224 trainable x 16 B + the rest of 8.2e9 frozen at 2 B.
  const Totals t = totals(estimate(preset("qwen3-8b"), p));
  EXPECT_EQ(t.static_bytes, 308'224LL * 16 + (8'200'000'000 - 308'224) * 2);
}

TEST(StaticState, PagedOptimizerSaysWhatPagingChanges) {
  TrainingPlan p;
  p.optimizer = OptimizerKind::paged_adamw_8bit;
  bool said = false;
  for (const std::string& n : estimate(preset("qwen3-8b"), p).notes) {
    said = said || n.find("does not shrink the steady state") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace trainmem

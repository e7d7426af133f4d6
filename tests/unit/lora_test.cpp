// apply_method() for LoRA, DoRA and QLoRA: adapter counts against hand-computed r x (in + out),
// the MoE target choices, fused Phi-3 modules, and what QLoRA quantises.
#include <gtest/gtest.h>

#include "plan/method.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

LoadedModel preset(const char* id) {
  auto m = load_preset(id);
  EXPECT_TRUE(m.ok()) << id;
  return m.value();
}

TrainingPlan lora(std::vector<std::string> targets, Method method = Method::lora,
                  Convention convention = Convention::exact) {
  TrainingPlan p;
  p.method = method;
  p.convention = convention;
  p.lora.rank = 16;
  p.lora.targets = std::move(targets);
  return p;
}

std::int64_t adapter_params(const ParameterInventory& inv) {
  std::int64_t n = 0;
  for (const TensorGroup& g : inv.groups) n += is_adapter(g) ? group_params(g) : 0;
  return n;
}

const std::vector<std::string> kSeven = {"q", "k", "v", "o", "gate", "up", "down"};

struct Case {
  const char* preset;
  std::vector<std::string> targets;
  bool dora;
  Convention convention;
  std::int64_t adapter;  // hand-computed
};

// Per layer, r = 16: 16 x (in + out) per projection.
const Case kCases[] = {
    // Qwen3-8B (h 4096, 32 x 128 q, 8 x 128 kv, I 12288, 36 layers): seed 001's 43.7 M.
    // q 131,072 + k 81,920 + v 81,920 + o 131,072 + 3 x 262,144 = 1,212,416 x 36.
    {"qwen3-8b", kSeven, false, Convention::exact, 43'646'976},
    {"qwen3-8b", {"all-linear"}, false, Convention::exact, 43'646'976},
    {"qwen3-8b", {"attention"}, false, Convention::exact, (131'072 + 81'920) * 2 * 36},
    {"qwen3-8b", {"mlp"}, false, Convention::exact, 3 * 262'144 * 36},
    {"qwen3-8b", {"q", "v"}, false, Convention::exact, (131'072 + 81'920) * 36},
    // DoRA: + out per adapted linear: 4096 + 1024 + 1024 + 4096 + 12288 x 2 + 4096 = 38,912.
    {"qwen3-8b", kSeven, true, Convention::exact, 43'646'976 + 38'912 * 36},
    // lm_head and embed: 16 x (4096 + 151,936) each.
    {"qwen3-8b", {"lm_head"}, false, Convention::exact, 2'496'512},
    {"qwen3-8b", {"embed"}, false, Convention::exact, 2'496'512},
    // Qwen3-0.6B ties its head: PEFT still adapts lm_head, 16 x (1024 + 151,936).
    {"qwen3-0.6b", {"lm_head"}, false, Convention::exact, 2'447'360},
    // Qwen3-0.6B (h 1024, 16 x 128 q, 8 x 128 kv, I 3072, 28 layers): 360,448 x 28.
    {"qwen3-0.6b", kSeven, false, Convention::exact, 10'092'544},
    // Qwen3-30B-A3B (h 2048, 32 x 128 q, 4 x 128 kv, 48 layers, 128 experts of 768):
    // gate/up/down do not reach routed experts: attention only, 278,528 x 48.
    {"qwen3-30b-a3b", kSeven, false, Convention::exact, 13'369'344},
    // experts: + 3 x 16 x (2048 + 768) x 128 x 48.
    {"qwen3-30b-a3b", {"experts"}, false, Convention::exact, 830'472'192},
    // router: 16 x (2048 + 128) x 48.
    {"qwen3-30b-a3b", {"router"}, false, Convention::exact, 1'671'168},
    // Textbook: the seed's dense MLP of intermediate 6144: 671,744 x 48 = 32.2 M.
    {"qwen3-30b-a3b", kSeven, false, Convention::textbook, 32'243'712},
    // Phi-3-mini (h 3072, fused qkv 9216, fused gate_up 16384, I 8192, 32 layers):
    // qkv 196,608 + o 98,304 + gate_up 311,296 + down 180,224 = 786,432 x 32.
    {"phi-3-mini-4k-instruct", kSeven, false, Convention::exact, 25'165'824},
    {"phi-3-mini-4k-instruct", {"q"}, false, Convention::exact, 196'608 * 32},
};

class LoraCount : public ::testing::TestWithParam<Case> {};

TEST_P(LoraCount, HandComputedAdapterParams) {
  const Case& c = GetParam();
  TrainingPlan p = lora(c.targets, Method::lora, c.convention);
  p.lora.dora = c.dora;
  const ParameterInventory inv = apply_method(preset(c.preset), p);
  EXPECT_EQ(adapter_params(inv), c.adapter);
  EXPECT_EQ(params_trainable(inv), c.adapter);
}

INSTANTIATE_TEST_SUITE_P(Table, LoraCount, ::testing::ValuesIn(kCases));

TEST(Lora, TrainLayersIsLayersToTransform) {
  TrainingPlan p = lora(kSeven);
  p.freeze.train_layers = {0, 35};
  EXPECT_EQ(params_trainable(apply_method(preset("qwen3-8b"), p)), 1'212'416 * 2);
}

TEST(Lora, AdaptersAreFp32AndTheBaseIsFrozenAtItsDtype) {
  const ParameterInventory inv = apply_method(preset("qwen3-8b"), lora(kSeven));
  for (const TensorGroup& g : inv.groups) {
    EXPECT_EQ(g.trainable, is_adapter(g)) << g.name;
    EXPECT_EQ(g.dtype, is_adapter(g) ? Dtype::f32 : Dtype::bf16) << g.name;
    EXPECT_FALSE(g.quantised) << g.name;
  }
}

TEST(Lora, EstimateReportsSeedTrainableCountAndPeftShare) {
  const Ledger l = estimate(preset("qwen3-8b"), lora(kSeven));
  EXPECT_EQ(l.model.params_trainable, 43'646'976);
  bool peft = false;
  for (const std::string& n : l.notes) {
    peft = peft || n.find(
                       "trainable params: 43,646,976 || all params: 8,234,382,336 || "
                       "trainable%: 0.5301") != std::string::npos;
  }
  EXPECT_TRUE(peft);
}

TEST(Lora, MoeNoteSaysWhatWasAdapted) {
  const Ledger l = estimate(preset("qwen3-30b-a3b"), lora(kSeven));
  bool said = false;
  for (const std::string& n : l.notes) said = said || n.find("not adapted") != std::string::npos;
  EXPECT_TRUE(said);
}

// transformers 5 (the default): the routed experts are fused 3-D parameters, which bitsandbytes'
// Linear4bit conversion skips; prepare_model_for_kbit_training then upcasts them to fp32 with the
// rest of the 16-bit parameters.
TEST(Qlora, QuantisesLinearsButNotEmbeddingsHeadNormsRouterOrFusedExperts) {
  const ParameterInventory inv = apply_method(preset("qwen3-30b-a3b"), lora(kSeven, Method::qlora));
  for (const TensorGroup& g : inv.groups) {
    if (is_adapter(g)) continue;
    const bool linear = is_linear_weight(g) && g.role != Role::lm_head && g.role != Role::router &&
                        g.expert != ExpertKind::routed;
    EXPECT_EQ(g.quantised, linear) << g.name;
    EXPECT_EQ(g.dtype, linear ? Dtype::nf4 : Dtype::f32) << g.name;
  }
}

// Qwen3-30B-A3B's routed experts: 48 layers x 128 experts x 3 projections x 768 x 2,048 =
// 28,991,029,248 params. transformers 4 builds each as an nn.Linear (experts_as_linears):
// bitsandbytes quantises them and gate/up/down reach them, r16 adding 128 x 48 x 3 x 16 x
// (768 + 2,048) = 830,472,192 adapter params. unsloth's patch quantises the fused ones, which
// the names still do not reach.
TEST(Qlora, RoutedExpertsByTransformersVersionAndFramework) {
  const LoadedModel m = preset("qwen3-30b-a3b");
  const auto experts = [](const ParameterInventory& inv, bool quantised) {
    std::int64_t n = 0;
    for (const TensorGroup& g : inv.groups) {
      if (g.expert == ExpertKind::routed && !is_adapter(g) && g.quantised == quantised) {
        n += group_params(g);
      }
    }
    return n;
  };
  const TrainingPlan v5 = lora(kSeven, Method::qlora);
  TrainingPlan v4 = v5;
  v4.behaviour.experts_as_linears = true;
  TrainingPlan unsloth = v5;
  unsloth.behaviour.quantises_fused_experts = true;
  const ParameterInventory i5 = apply_method(m, v5);
  const ParameterInventory i4 = apply_method(m, v4);
  const ParameterInventory iu = apply_method(m, unsloth);
  EXPECT_EQ(experts(i5, false), 28'991'029'248);
  EXPECT_EQ(experts(i5, true), 0);
  EXPECT_EQ(experts(i4, true), 28'991'029'248);
  EXPECT_EQ(experts(iu, true), 28'991'029'248);
  EXPECT_EQ(params_trainable(i4) - params_trainable(i5), 830'472'192);
  EXPECT_EQ(params_trainable(iu), params_trainable(i5));
}

// The profile table sets the knob from the transformers version: below 5.0, nn.Linear experts.
TEST(Qlora, TransformersFourBuildsExpertsAsLinears) {
  auto r4 =
      plan_from({{"method", "qlora", "--method"}, {"versions", "transformers=4.57", "--versions"}});
  auto r5 = plan_from({{"method", "qlora", "--method"}});
  ASSERT_TRUE(r4.ok()) << r4.error().message();
  ASSERT_TRUE(r5.ok());
  EXPECT_TRUE(r4->plan.behaviour.experts_as_linears);
  EXPECT_FALSE(r5->plan.behaviour.experts_as_linears);
  auto unsloth =
      plan_from({{"method", "qlora", "--method"}, {"framework", "unsloth", "--framework"}});
  ASSERT_TRUE(unsloth.ok());
  EXPECT_TRUE(unsloth->plan.behaviour.quantises_fused_experts);
}

TEST(Qlora, QuantisedCountForQwen3_8B) {
  const ParameterInventory inv = apply_method(preset("qwen3-8b"), lora(kSeven, Method::qlora));
  std::int64_t quantised = 0;
  for (const TensorGroup& g : inv.groups) quantised += g.quantised ? group_params(g) : 0;
  // Non-embedding 6,946,075,648 minus norms (36 x (2 x 4096 + 2 x 128) + 4096 = 308,224).
  EXPECT_EQ(quantised, 6'945'767'424);
}

TEST(Qlora, NoPrepareKbitKeeps16Bit) {
  TrainingPlan p = lora(kSeven, Method::qlora);
  p.quant.prepare_kbit = false;
  for (const TensorGroup& g : apply_method(preset("qwen3-8b"), p).groups) {
    if (!is_adapter(g) && !g.quantised) {
      EXPECT_EQ(g.dtype, Dtype::bf16) << g.name;
    }
  }
}

// PEFT modules_to_save: a trained copy beside each frozen original, in the original's dtype.
// Qwen3-8B, q,v r16: adapters (131,072 + 81,920) x 36 = 7,667,712; copies of the
// 151,936 x 4,096 embedding and head: 2 x 622,329,856.
TEST(Lora, ModulesToSaveTrainACopyOfEachModule) {
  TrainingPlan p = lora({"q", "v"});
  p.lora.modules_to_save = {"embed", "lm_head"};
  const ParameterInventory inv = apply_method(preset("qwen3-8b"), p);
  EXPECT_EQ(params_trainable(inv), 7'667'712 + 2 * 622'329'856);
  int copies = 0;
  for (const TensorGroup& g : inv.groups) {
    if (!g.module_copy) continue;
    ++copies;
    EXPECT_TRUE(g.trainable) << g.name;
    EXPECT_EQ(g.dtype, Dtype::bf16) << g.name;  // the original's, not the adapters' fp32
    EXPECT_NE(g.name.find(".modules_to_save.default."), std::string::npos) << g.name;
  }
  EXPECT_EQ(copies, 2);
  // QLoRA: prepare_model_for_kbit_training made the originals fp32 before the copy.
  p.method = Method::qlora;
  for (const TensorGroup& g : apply_method(preset("qwen3-8b"), p).groups) {
    if (g.module_copy) {
      EXPECT_EQ(g.dtype, Dtype::f32) << g.name;
    }
  }
}

// Qwen3-0.6B ties its head: lm_head's copy is a new 151,936 x 1,024 weight. embed_tokens' copy
// does not feed the head, so nothing of the tied head's training appears (no head weight
// gradient in the logits, no second dense embedding gradient), and its gradient is the copy's
// bf16 151,936 x 1,024 x 2 B = 311,164,928 B more.
TEST(Lora, ModulesToSaveOnATiedModel) {
  const LoadedModel m = preset("qwen3-0.6b");
  TrainingPlan p = lora({"q", "v"});
  const Ledger plain = estimate(m, p);
  p.lora.modules_to_save = {"lm_head"};
  EXPECT_EQ(params_trainable(apply_method(m, p)) - plain.model.params_trainable, 155'582'464);
  p.lora.modules_to_save = {"embed"};
  const Ledger embed = estimate(m, p);
  for (const LedgerItem& item : embed.items) {
    EXPECT_NE(item.id, "temporaries.tied_embedding_grad");
  }
  const auto tenant = [](const Ledger& l, Tenant t) {
    return totals(l).by_tenant[static_cast<std::size_t>(t)];
  };
  EXPECT_EQ(tenant(embed, Tenant::gradients) - tenant(plain, Tenant::gradients), 311'164'928);
  EXPECT_EQ(tenant(embed, Tenant::logits), tenant(plain, Tenant::logits));
  // The full fine-tune trains the shared tensor: there the second gradient is priced.
  p.method = Method::full;
  p.lora.modules_to_save = {};
  bool tied_grad = false;
  for (const LedgerItem& item : estimate(m, p).items) {
    tied_grad = tied_grad || item.id == "temporaries.tied_embedding_grad";
  }
  EXPECT_TRUE(tied_grad);
}

TEST(Method, UnknownTargetIsAnError) {
  TrainingPlan p = lora({"q", "qproj"});
  const auto e = validate(p);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->field, "lora.targets");
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

// DoRA's saved tensors beyond LoRA's (peft dora.py; validation/data/dora.jsonl), hand-computed for
// Qwen3-8B, LoRA r16 on q and v, bf16 base with fp32 adapters, batch 2 x 128:
//   q out 32 heads x 128 = 4,096; v out 8 kv heads x 128 = 1,024: 5,120 outputs per layer.
//   per token: 5,120 x (4 B LoRA output + 2 B base output) = 30,720 B; 256 tokens: 7,864,320 B.
//   per layer: 3 fp32 vectors x 5,120 x 4 B = 61,440 B.
//   36 layers x (7,864,320 + 61,440) = 285,327,360 B.
TEST(Dora, SavedActivationsBeyondLoraByHand) {
  const LoadedModel m = preset("qwen3-8b");
  TrainingPlan p = lora({"q", "v"});
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 128;
  const auto saved = [&](const TrainingPlan& plan) {
    for (const LedgerItem& i : estimate(m, plan).items) {
      if (i.id == "activations.saved") return i.bytes;
    }
    return std::int64_t{-1};
  };
  TrainingPlan dora = p;
  dora.lora.dora = true;
  EXPECT_EQ(saved(dora) - saved(p), 285'327'360);
  // With LoRA dropout the base output is recomputed in fp32 from an fp32 weight copy:
  // per token 5,120 x (4 + 4) B; per layer + 5,120 x 4,096 x 4 B (the copies of W_q and W_v:
  // 4,096 x 4,096 and 1,024 x 4,096).
  p.lora.dropout = 0.1;
  dora.lora.dropout = 0.1;
  const std::int64_t per_layer = 5'120 * 8 * 256 + 61'440 + 5'120 * 4'096 * 4;
  EXPECT_EQ(saved(dora) - saved(p), 36 * per_layer);
}

}  // namespace
}  // namespace trainmem

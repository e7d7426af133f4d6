// The vocabulary: aliases resolve to their term, case and '_'/'-' do not matter, unknown names
// suggest the nearest, and docs/formats.md lists every name.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "trainmem/plan.h"

namespace trainmem {
namespace {

TEST(Vocabulary, AliasesResolveToTheirTerm) {
  EXPECT_EQ(find_term(optimizer_vocabulary(), "adamw_torch_fused")->name, "adamw");
  EXPECT_EQ(find_term(optimizer_vocabulary(), "PAGED_ADAMW_8BIT")->name, "paged-adamw-8bit");
  EXPECT_EQ(find_term(attention_vocabulary(), "flash_attention_2")->name, "flash");
  EXPECT_EQ(find_term(lora_target_vocabulary(), "gate_proj")->name, "gate");
  EXPECT_EQ(find_term(precision_vocabulary(), "bf16-true")->name, "bf16");
  EXPECT_EQ(find_term(method_vocabulary(), "sideways"), nullptr);
}

TEST(Vocabulary, NoSpellingBelongsToTwoTerms) {
  for (const Vocabulary* v : all_vocabularies()) {
    for (const Term& t : v->terms) {
      EXPECT_EQ(find_term(*v, t.name), &t) << v->flag << " " << t.name;
      for (const std::string& a : t.aliases) EXPECT_EQ(find_term(*v, a), &t) << v->flag << " " << a;
    }
  }
}

TEST(Vocabulary, UnknownNamesSuggestTheNearest) {
  auto r = resolve_term(loss_vocabulary(), "chunkd");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "--loss");
  EXPECT_NE(r.error().reason.find("did you mean chunked"), std::string::npos) << r.error().reason;
}

TEST(Vocabulary, HfOptimStringsImplyAnImplementation) {
  EXPECT_EQ(implied_optimizer_impl("adamw_torch_fused"), "fused");
  EXPECT_EQ(implied_optimizer_impl("adamw_torch"), "foreach");
  EXPECT_FALSE(implied_optimizer_impl("adamw").has_value());
}

TEST(Vocabulary, TokenCountsTakeKAsPowersOfTwo) {
  EXPECT_EQ(parse_tokens("4k", "--seq").value(), 4096);
  EXPECT_EQ(parse_tokens("32K", "--seq").value(), 32768);
  EXPECT_EQ(parse_tokens("2048", "--seq").value(), 2048);
  EXPECT_EQ(parse_tokens("1.5k", "--seq").value(), 1536);
  EXPECT_FALSE(parse_tokens("4kb", "--seq").ok());
  EXPECT_FALSE(parse_tokens("0.3k", "--seq").ok());  // 307.2 tokens
}

TEST(Vocabulary, DocsListEveryNameAndAlias) {
  std::ifstream in(std::string(TRAINMEM_SOURCE_DIR) + "/docs/formats.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (const Vocabulary* v : all_vocabularies()) {
    for (const Term& t : v->terms) {
      EXPECT_NE(doc.find("`" + t.name + "`"), std::string::npos) << t.name;
      for (const std::string& a : t.aliases) {
        EXPECT_NE(doc.find("`" + a + "`"), std::string::npos) << v->flag << " alias " << a;
      }
    }
  }
}

TEST(PlanSettings, LaterSettingsWinAndFileSettingsWithoutEffectAreNotes) {
  auto r = plan_from({{"batch", "8", "--batch", false},
                      {"batch", "2", "--batch", false},
                      {"lora_rank", "8", "sft.yaml: lora_r", true}});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->plan.batch, 2);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("sft.yaml: lora_r"), std::string::npos);
  EXPECT_FALSE(plan_from({{"lora_rank", "8", "--lora-rank", false}}).ok());
}

// A whole number may be spelled as a token count can (1e6, 8.0); a fraction is refused, not
// rounded, and so is a count that is not a number.
TEST(PlanSettings, WholeNumbersMayBeSpelledInScientificOrDecimalNotation) {
  auto r =
      plan_from({{"batch", "1e2", "--batch", false}, {"grad_accum", "8.0", "--grad-accum", false}});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->plan.batch, 100);
  EXPECT_EQ(r->plan.grad_accum, 8);
  for (const char* bad : {"1.5", "2e-1", "8x", "", "nan", "inf", "1e300"}) {
    auto e = plan_from({{"batch", bad, "--batch", false}});
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.error().message().find("is not a whole number"), std::string::npos) << bad;
  }
}

// The ecosystem's names, as a Python call gives them, are the plan settings they name; a switch
// reads its value as a boolean (load_in_8bit sets two settings, bf16=false sets nothing).
TEST(PlanSettings, EcosystemNamesAreThePlanSettingsTheyName) {
  const auto plan = [](const PlanPatch& patch) {
    auto r = plan_from(patch);
    EXPECT_TRUE(r.ok()) << r.error().message();
    return r ? render_plan_json(r->plan) : std::string();
  };
  EXPECT_EQ(plan({{"per_device_train_batch_size", "2", "per_device_train_batch_size"},
                  {"max_length", "4k", "max_length"},
                  {"gradient_accumulation_steps", "8", "gradient_accumulation_steps"},
                  {"optim", "paged_adamw_8bit", "optim"},
                  {"gradient_checkpointing", "true", "gradient_checkpointing"},
                  {"bf16", "True", "bf16"}}),
            plan({{"batch", "2", "--batch"},
                  {"seq", "4096", "--seq"},
                  {"grad_accum", "8", "--grad-accum"},
                  {"optimizer", "paged_adamw_8bit", "--optim"},
                  {"checkpointing", "full", "--checkpointing"},
                  {"precision", "bf16-mixed", "--precision"}}));
  auto eight = plan_from({{"load_in_8bit", "true", "load_in_8bit"},
                          {"lora_r", "8", "lora_r"},
                          {"target_modules", "q_proj,v_proj", "target_modules"}});
  ASSERT_TRUE(eight.ok()) << eight.error().message();
  EXPECT_EQ(eight->plan.method, Method::qlora);
  EXPECT_EQ(eight->plan.quant.kind, QuantKind::int8);
  EXPECT_EQ(eight->plan.lora.rank, 8);
  EXPECT_EQ(plan({{"bf16", "false", "bf16"}}), plan({}));
  EXPECT_EQ(plan({{"gradient_checkpointing", "false", "gradient_checkpointing"}}),
            plan({{"checkpointing", "none", "--checkpointing"}}));
  auto bad = plan_from({{"bf16", "maybe", "bf16"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("'maybe' is not true or false"), std::string::npos);
  // A near miss of an ecosystem name is suggested too.
  auto near = plan_from({{"per_device_train_batch_sizes", "2", "per_device_train_batch_sizes"}});
  ASSERT_FALSE(near.ok());
  EXPECT_NE(near.error().message().find("per_device_train_batch_size"), std::string::npos);
}

// The web form starts from default_settings(): applied as settings, they must give the plan the
// command line prices with no flags, and each enumerated value must be a canonical name.
TEST(PlanSettings, DefaultSettingsDescribeTheCommandLinesDefaults) {
  PlanPatch defaults = default_settings();
  for (PlanSetting& s : defaults) s.from_file = true;  // lora_rank under method full: a note
  auto written = plan_from(defaults);
  auto none = plan_from({});
  ASSERT_TRUE(written.ok()) << written.error().message();
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(render_plan_json(written->plan), render_plan_json(none->plan));
  const auto value = [&](const std::string& key) {
    for (const PlanSetting& s : defaults)
      if (s.key == key) return s.value;
    return std::string("(absent)");
  };
  EXPECT_EQ(value("optimizer_impl"), "fused");  // the HF Trainer's adamw_torch_fused
  EXPECT_EQ(value("lora_targets"), "q,k,v,o,gate,up,down");
  EXPECT_EQ(value("params"), "(absent)");
  ASSERT_NE(find_term(precision_vocabulary(), value("precision")), nullptr);
  EXPECT_EQ(find_term(precision_vocabulary(), value("precision"))->name, value("precision"));
}

}  // namespace
}  // namespace trainmem

// The documents the web page reads besides the CLI's: trainmem.timeline/1 and trainmem.form/1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

using nlohmann::json;

// A hand-built ledger: weights live in every slot, activations only in steady-state backward.
Ledger two_item_ledger() {
  Ledger l;
  LedgerItem w;
  w.id = "weights";
  w.tenant = Tenant::weights;
  w.bytes = 1000;
  w.live = kAllPhases;
  LedgerItem a;
  a.id = "acts";
  a.tenant = Tenant::activations;
  a.bytes = 300;
  a.live = phase_bit(1, Phase::backward);  // steady-state backward
  l.items = {w, a};
  return l;
}

TEST(TimelineJson, SlotsByTenantAndPeak) {
  const json doc = json::parse(render_timeline_json(two_item_ledger()));
  EXPECT_EQ(doc["schema"], "trainmem.timeline/1");
  ASSERT_EQ(doc["slots"].size(), static_cast<std::size_t>(kPhaseSlots));
  ASSERT_EQ(doc["tenants"].size(), static_cast<std::size_t>(kTenantCount));
  EXPECT_EQ(doc["tenants"][0]["id"], "weights");
  const std::string peak = slot_name(1 * kPhaseCount + static_cast<int>(Phase::backward));
  EXPECT_EQ(doc["peak_phase"], peak);
  EXPECT_EQ(doc["peak_bytes"], 1300);  // 1000 weights + 300 activations
  int peaks = 0;
  for (const json& s : doc["slots"]) {
    const bool at_peak = s["phase"] == peak;
    EXPECT_EQ(s["peak"], at_peak);
    EXPECT_EQ(s["by_tenant"]["weights"], 1000);
    EXPECT_EQ(s["by_tenant"]["activations"], at_peak ? 300 : 0);
    EXPECT_EQ(s["bytes"], at_peak ? 1300 : 1000);
    peaks += at_peak ? 1 : 0;
  }
  EXPECT_EQ(peaks, 1);
}

TEST(TimelineJson, SlotBytesAreTheLedgerTotals) {
  auto m = load_preset("aya-23-8b");
  ASSERT_TRUE(m.ok()) << m.error().message();
  const Ledger l = estimate(*m, TrainingPlan{});
  const Totals t = totals(l);
  const json doc = json::parse(render_timeline_json(l));
  EXPECT_EQ(doc["peak_bytes"], t.peak_bytes);
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    const json& s = doc["slots"][static_cast<std::size_t>(slot)];
    std::int64_t sum = 0;
    for (const auto& [tenant, bytes] : s["by_tenant"].items()) sum += bytes.get<std::int64_t>();
    EXPECT_EQ(sum, t.by_slot[static_cast<std::size_t>(slot)]) << s["phase"];
    EXPECT_EQ(s["bytes"], t.by_slot[static_cast<std::size_t>(slot)]);
  }
}

// Given a framework and method, the form starts where the command line prices them: the
// profile's defaults (torchtune: bf16, checkpointing, fused AdamW for LoRA) and LoRA's bf16 base.
TEST(FormJson, DefaultsFollowTheFrameworkAndMethod) {
  auto plan = plan_from(
      {{"framework", "torchtune", "framework", true}, {"method", "lora", "method", true}});
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  const json doc = json::parse(render_form_json(plan->plan));
  EXPECT_EQ(doc["defaults"]["framework"], "torchtune");
  EXPECT_EQ(doc["defaults"]["method"], "lora");
  EXPECT_EQ(doc["defaults"]["checkpointing"], "full");
  EXPECT_EQ(doc["defaults"]["precision"], "bf16");
  auto hf_lora = plan_from({{"method", "lora", "method", true}});
  ASSERT_TRUE(hf_lora.ok());
  const json hf = json::parse(render_form_json(hf_lora->plan));
  EXPECT_EQ(hf["defaults"]["checkpointing"], "none");
  EXPECT_EQ(hf["defaults"]["precision"], "bf16");  // the LoRA recipes' bf16 base
  EXPECT_EQ(json::parse(render_form_json())["defaults"]["precision"], "bf16-mixed");
  // Written back as settings, the defaults give the same plan.
  PlanPatch written = settings_of(plan->plan);
  for (PlanSetting& s : written) s.from_file = true;
  auto again = plan_from(written);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(render_plan_json(again->plan), render_plan_json(plan->plan));
}

TEST(FormJson, DefaultsAndChoicesAreTheLibrarys) {
  const json doc = json::parse(render_form_json());
  EXPECT_EQ(doc["schema"], "trainmem.form/1");
  for (const PlanSetting& s : default_settings())
    EXPECT_EQ(doc["defaults"][s.key], s.value) << s.key;
  EXPECT_EQ(doc["defaults"].size(), default_settings().size());
  ASSERT_TRUE(doc["choices"].contains("optimizer_impl"));
  ASSERT_EQ(doc["choices"]["method"].size(), method_vocabulary().terms.size());
  EXPECT_EQ(doc["choices"]["method"][0]["name"], method_vocabulary().terms[0].name);
  EXPECT_EQ(doc["choices"]["method"][0]["meaning"], method_vocabulary().terms[0].meaning);
  // Every default of an enumerated setting is one of its choices.
  for (const auto& [key, terms] : doc["choices"].items()) {
    if (!doc["defaults"].contains(key) || key == "lora_targets") continue;
    bool found = false;
    for (const json& t : terms) found = found || t["name"] == doc["defaults"][key];
    EXPECT_TRUE(found) << key << " default " << doc["defaults"][key];
  }
}

}  // namespace
}  // namespace trainmem

// Every ledger line carries a stable id ("<tenant>.<what>"), unique within its ledger, for every
// preset under plans that reach every tenant's branches (issue 12: ledger lines with stable ids).
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

std::vector<TrainingPlan> plans() {
  std::vector<TrainingPlan> out;
  TrainingPlan p = hf_trainer_defaults();
  out.push_back(p);
  p.method = Method::lora;
  p.lora.dropout = 0.1;
  p.checkpointing = Checkpointing::full;
  out.push_back(p);
  p.method = Method::qlora;
  p.loss = Loss::fused;
  p.checkpointing = Checkpointing::selective;
  out.push_back(p);
  TrainingPlan compiled = hf_trainer_defaults();
  compiled.behaviour.compiled_loss = true;
  out.push_back(compiled);
  TrainingPlan textbook = hf_trainer_defaults();
  textbook.convention = Convention::textbook;
  out.push_back(textbook);
  TrainingPlan freeze = hf_trainer_defaults();
  freeze.method = Method::freeze;
  freeze.freeze.train_modules = {"q", "v", "norm"};
  freeze.precision = Precision::bf16_mixed;
  freeze.optimizer = OptimizerKind::adamw_8bit;
  out.push_back(freeze);
  return out;
}

TEST(LedgerIds, EveryLineHasAUniqueStableId) {
  const std::regex shape("^[a-z_]+\\.[a-z0-9_.]+$");
  int lines = 0;
  for (const PresetInfo& preset : list_presets()) {
    const auto model = load_preset(preset.id);
    ASSERT_TRUE(model) << preset.id;
    for (const TrainingPlan& plan : plans()) {
      const Ledger ledger = estimate(model.value(), plan);
      std::set<std::string> seen;
      for (const LedgerItem& item : ledger.items) {
        SCOPED_TRACE(preset.id + ": " + item.label);
        EXPECT_TRUE(std::regex_match(item.id, shape)) << "'" << item.id << "'";
        EXPECT_EQ(item.id.substr(0, item.id.find('.')), tenant_name(item.tenant));
        EXPECT_TRUE(seen.insert(item.id).second) << "duplicate id " << item.id;
        ++lines;
      }
    }
  }
  EXPECT_GT(lines, 500);
}

// The id does not follow the label's wording: the saved activations keep their id whatever the
// layer count in the label.
TEST(LedgerIds, IdsDoNotDependOnTheNumbersInTheLabel) {
  const auto small = load_preset("llama-3.1-8b");
  const auto large = load_preset("llama-3.1-70b");
  ASSERT_TRUE(small && large);
  const auto ids = [](const Ledger& l) {
    std::set<std::string> out;
    for (const LedgerItem& i : l.items) out.insert(i.id);
    return out;
  };
  const TrainingPlan plan = hf_trainer_defaults();
  EXPECT_EQ(ids(estimate(small.value(), plan)), ids(estimate(large.value(), plan)));
  EXPECT_TRUE(ids(estimate(large.value(), plan)).count("activations.saved"));
}

}  // namespace
}  // namespace trainmem

// The optimizer-state line of every --optimizer against the states the real implementation keeps
// after one step (validation/data/optimizer-states.json, validation/optimizer_state_probe.py:
// the HF Trainer's create_optimizer for its `optim` strings, else the library's class; bf16 and
// fp32 full fine-tunes of two tiny models). torch's `step` scalars and bitsandbytes' shared
// quantisation maps are not priced (a few hundred bytes).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

std::string source(const std::string& path) {
  return std::string(TRAINMEM_SOURCE_DIR) + "/" + path;
}

std::int64_t priced_state_bytes(const LoadedModel& model, const std::string& precision,
                                const std::string& optimizer) {
  auto plan = plan_from({{"method", "full", "test", false},
                         {"precision", precision, "test", false},
                         {"optimizer", optimizer, "test", false}});
  EXPECT_TRUE(plan.ok()) << optimizer << ": " << plan.error().message();
  if (!plan.ok()) return -1;
  std::int64_t bytes = 0;
  for (const LedgerItem& item : estimate(model, plan->plan).items) {
    if (item.id.starts_with("optimizer_states")) bytes += item.bytes;
  }
  return bytes;
}

TEST(OptimizerStates, EveryOptimizerKeepsWhatItsImplementationKeeps) {
  std::ifstream in(source("validation/data/optimizer-states.json"));
  ASSERT_TRUE(in) << "validation/data/optimizer-states.json";
  const auto doc = nlohmann::json::parse(in);
  int rows = 0;
  for (const auto& [config, precisions] : doc["models"].items()) {
    std::ifstream text(source("validation/" + config));
    const std::string json((std::istreambuf_iterator<char>(text)), {});
    auto model = model_from_config_text(json, config);
    ASSERT_TRUE(model.ok()) << config;
    for (const auto& [precision, optimizers] : precisions.items()) {
      for (const auto& [optimizer, measured] : optimizers.items()) {
        const std::int64_t state = measured["state_bytes"].get<std::int64_t>();
        const std::int64_t priced = priced_state_bytes(*model, precision, optimizer);
        // Adam-mini picks its second-moment blocks by parameter name; GPT-2's wpe, c_attn and
        // attention c_proj match none of its names and keep one value each, where trainmem
        // prices one per row (docs/method.md): within 0.2 %, over.
        if (optimizer == "adam-mini" && config.find("gpt2") != std::string::npos) {
          EXPECT_GE(priced, state) << config << " " << precision;
          EXPECT_LE(priced - state, state / 500) << config << " " << precision;
        } else {
          EXPECT_EQ(priced, state) << config << " " << precision << " " << optimizer;
        }
        ++rows;
      }
    }
  }
  // paged AdEMAMix cannot run on CPU (optimizer_state_probe.py): 19 of the 21 rows.
  EXPECT_EQ(rows, 2 * 2 * 19);
}

}  // namespace
}  // namespace trainmem

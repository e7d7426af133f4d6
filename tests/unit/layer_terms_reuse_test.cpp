// layer_activations() builds a layer's saved-tensor terms once and lets the next layer share them
// when same_layer_terms() says the two layers save alike (docs/performance.md, fourth and fifth
// rounds). This holds that promise: across every preset and several plans, wherever
// same_layer_terms() is true for neighbouring layers, layer_terms() really does return the same
// terms for both.
#include <gtest/gtest.h>

#include "ledger/activation_model.h"
#include "plan/method.h"
#include "support/models.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

bool equal_terms(const std::vector<ActivationTerm>& a, const std::vector<ActivationTerm>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].bytes_per_token != b[i].bytes_per_token ||
        a[i].bytes_per_score != b[i].bytes_per_score ||
        a[i].bytes_per_pair != b[i].bytes_per_pair ||
        std::string_view(a[i].source) != std::string_view(b[i].source) ||
        a[i].bytes_fixed != b[i].bytes_fixed) {
      return false;
    }
  }
  return true;
}

std::vector<TrainingPlan> plans() {
  std::vector<TrainingPlan> out(5);
  out[1].method = Method::lora;
  out[2].method = Method::qlora;
  out[2].checkpointing = Checkpointing::full;
  out[3].method = Method::freeze;
  out[3].freeze.train_layers = {0, 1};
  out[4].seq = 16384;  // beyond every sliding window: the windowed layers' masks differ
  return out;
}

TEST(LayerTermsReuse, AlikeLayersSaveTheSameTerms) {
  int alike = 0, differ = 0;
  for (const PresetInfo& preset : list_presets()) {
    const LoadedModel m = testing_support::load_or_fail(preset.id);
    for (const TrainingPlan& p : plans()) {
      const ParameterInventory inv = apply_method(m, p);
      const std::vector<LayerPlan> layers = layer_plans(m.spec, inv, p);
      const ActivationSettings cfg = activation_settings(p);
      for (std::size_t i = 1; i < layers.size(); ++i) {
        if (!same_layer_terms(m.spec, layers[i - 1], layers[i])) {
          ++differ;
          continue;
        }
        ++alike;
        EXPECT_TRUE(equal_terms(layer_terms(m.spec, layers[i - 1], cfg),
                                layer_terms(m.spec, layers[i], cfg)))
            << preset.id << " layers " << i - 1 << " and " << i;
      }
    }
  }
  // Both branches are exercised: dense layers alike, and MoE / sliding / frozen boundaries not.
  EXPECT_GT(alike, 1000);
  EXPECT_GT(differ, 10);
}

// Hand-checked cases: Qwen3-8B's 36 layers are alike under a full fine-tune; DeepSeek-V3's third
// layer is dense and its fourth MoE (first_k_dense_replace 3); a freeze plan training layers 0-1
// sets every layer apart from the next up to layer 2 (layer 0's input needs no grad, layer 1's
// does; layer 2 is frozen), and layers 2 and 3 alike (frozen, input needing grad).
TEST(LayerTermsReuse, Boundaries) {
  TrainingPlan full;
  const LoadedModel qwen = testing_support::load_or_fail("qwen3-8b");
  const auto q = layer_plans(qwen.spec, apply_method(qwen, full), full);
  ASSERT_EQ(q.size(), 36u);
  for (std::size_t i = 1; i < q.size(); ++i) EXPECT_TRUE(same_layer_terms(qwen.spec, q[0], q[i]));

  const LoadedModel ds = testing_support::load_or_fail("deepseek-v3");
  const auto d = layer_plans(ds.spec, apply_method(ds, full), full);
  EXPECT_TRUE(same_layer_terms(ds.spec, d[1], d[2]));
  EXPECT_FALSE(same_layer_terms(ds.spec, d[2], d[3]));
  EXPECT_TRUE(same_layer_terms(ds.spec, d[3], d[4]));

  TrainingPlan freeze;
  freeze.method = Method::freeze;
  freeze.freeze.train_layers = {0, 1};
  const auto f = layer_plans(qwen.spec, apply_method(qwen, freeze), freeze);
  EXPECT_FALSE(same_layer_terms(qwen.spec, f[0], f[1]));
  EXPECT_FALSE(same_layer_terms(qwen.spec, f[1], f[2]));
  EXPECT_TRUE(same_layer_terms(qwen.spec, f[2], f[3]));
}

}  // namespace
}  // namespace trainmem

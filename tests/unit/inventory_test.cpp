// Exact parameter counts of every preset against ecosystem.md section 5's hand-computed integers,
// and each preset's count against its published figure.
#include <gtest/gtest.h>

#include <cmath>

#include "trainmem/model.h"

namespace trainmem {
namespace {

struct Expected {
  const char* preset;
  std::int64_t total;
  std::int64_t active;         // 0: same as total
  std::int64_t non_embedding;  // 0: not checked
  std::int64_t mtp;
};

// research/ecosystem.md section 5: computed from the architecture by hand.
const Expected kExpected[] = {
    {"qwen2.5-1.5b", 1'543'714'304, 0, 1'310'340'608, 0},
    {"qwen2.5-7b", 7'615'616'512, 0, 6'525'621'760, 0},
    {"qwen3-0.6b", 596'049'920, 0, 440'467'456, 0},
    {"qwen3-1.7b", 1'720'574'976, 0, 1'409'410'048, 0},
    {"qwen3-4b", 4'022'468'096, 0, 3'633'511'936, 0},
    {"qwen3-8b", 8'190'735'360, 0, 6'946'075'648, 0},
    {"qwen3-30b-a3b", 30'532'122'624, 3'353'032'704, 0, 0},
    {"llama-3.1-8b", 8'030'261'248, 0, 0, 0},
    {"llama-3.1-70b", 70'553'706'496, 0, 0, 0},
    {"mistral-7b-v0.1", 7'241'732'096, 0, 0, 0},
    {"mixtral-8x7b-v0.1", 46'702'792'704, 12'879'925'248, 0, 0},
    {"gemma-2-9b", 9'241'705'984, 0, 8'324'201'984, 0},
    {"phi-3-mini-4k-instruct", 3'821'079'552, 0, 0, 0},
    {"deepseek-v3", 671'026'419'200, 37'552'297'472, 0, 13'463'426'304},
    {"gpt2", 124'439'808, 0, 0, 0},
};

class PresetCount : public ::testing::TestWithParam<Expected> {};

TEST_P(PresetCount, ExactIntegerCount) {
  const Expected& e = GetParam();
  auto model = load_preset(e.preset);
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(params_total(model->inventory), e.total);
  EXPECT_EQ(params_active(model->inventory, model->spec), e.active ? e.active : e.total);
  if (e.non_embedding) {
    EXPECT_EQ(params_non_embedding(model->inventory), e.non_embedding);
  }
  EXPECT_EQ(params_mtp(model->inventory), e.mtp);
}

// Every exact count matches the figure the model card publishes to within one unit of its last
// digit (8.2B -> within 0.1B): cards round some counts (0.596B -> 0.6B) and truncate others
// (7.6156B -> 7.61B, 70.55B -> 70B).
TEST_P(PresetCount, RoundsToPublishedFigure) {
  const Expected& e = GetParam();
  auto model = load_preset(e.preset);
  ASSERT_TRUE(model.ok());
  const std::string label = model->spec.published_label;
  const auto dot = label.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(label.size() - dot - 2);
  const double unit = label.back() == 'M' ? 1e6 : 1e9;
  const double tolerance = unit * std::pow(10.0, -decimals);
  EXPECT_LE(std::abs(static_cast<double>(e.total - model->spec.published_params)), tolerance)
      << label;
}

INSTANTIATE_TEST_SUITE_P(AllPresets, PresetCount, ::testing::ValuesIn(kExpected),
                         [](const auto& param_info) {
                           std::string name = param_info.param.preset;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(Presets, EveryPresetHasAnExpectedCount) {
  EXPECT_EQ(list_presets().size(), std::size(kExpected));
}

}  // namespace
}  // namespace trainmem

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
    // Issue 15 families, by hand (docs/families.md gives the per-layer sums):
    // pythia: layer = qkv h*3h+3h + dense h*h+h + mlp 2*h*4h+5h + 2 LayerNorms 4h; + 2 V*h + 2h.
    {"pythia-160m", 162'322'944, 0, 85'056'000, 0},   // card: 85,056,000 non-embedding
    {"pythia-1b", 1'011'781'632, 0, 805'736'448, 0},  // card: 805,736,448 non-embedding
    // phi: 4(h^2+h) + (h*I+I) + (I*h+h) + 2h per layer; embed, lm_head + bias V, final 2h.
    {"phi-1_5", 1'418'270'720, 0, 0, 0},  // 24 x 50,354,176 + 2 x 104,857,600 + 51,200 + 4,096
    {"phi-2", 2'779'683'840, 0, 0, 0},    // 32 x 78,671,360 + 2 x 131,072,000 + 51,200 + 5,120
    // olmo2: 4h^2 + q/k norms 2h + 3hI + 2 post norms 2h: 32 x 202,391,552 + 2Vh + h.
    {"olmo-2-1124-7b", 7'298'617'344, 0, 0, 0},
    // gemma-2b: q,o 2h^2 + k,v 2h*256 + 3hI + 2h = 110,104,576 x 18 + Vh (tied) + h.
    {"gemma-2b", 2'506'172'416, 0, 0, 0},
    // granite: q,o 2h^2 + k,v 2h*512 + 3hI + 2h = 60,821,504 x 40 + Vh (tied) + h.
    {"granite-3.0-2b-base", 2'533'531'648, 0, 0, 0},
    // starcoder2: q,o 2(h^2+h) + k,v 2(h*256+256) + c_fc/c_proj 2hI+I+h + 2 LN 4h = 95,979,008
    // x 30 + Vh (tied) + 2h.
    {"starcoder2-3b", 3'030'371'328, 0, 0, 0},
    // falcon-7b: qkv h(h+2*64) + dense h^2 + 2*h*4h + LN 2h = 207,070,080 x 32 + Vh (tied) + 2h.
    {"falcon-7b", 6'921'720'704, 0, 0, 0},
    // aya-23-8b (cohere): q,o 2h^2 + k,v 2h*1024 + 3hI + one LN weight h = 218,107,904 x 32 +
    // Vh (tied) + h.
    {"aya-23-8b", 8'028'033'024, 0, 0, 0},
    // qwen1.5-moe: attention 16,783,360 + router 60h + 60 experts x 3h*1408 + shared 3h*5632 +
    // gate h + 2 norms 2h = 570,560,512 x 24 + 2Vh + h; active: routed x 4/60.
    {"qwen1.5-moe-a2.7b", 14'315'784'192, 2'689'173'504, 0, 0},
    // deepseek-v2-lite: MLA 13,763,072 + 2 norms; layer 0 dense 3h*10944; 26 MoE layers of
    // router 64h + 64 x 3h*1408 + shared 3h*2816; + 2Vh + h; active: routed x 6/64.
    {"deepseek-v2-lite", 15'706'484'224, 2'661'150'208, 0, 0},
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

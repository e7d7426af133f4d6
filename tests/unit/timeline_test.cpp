// render_timeline: one row per phase slot, the peak marked once, tenants listed.
#include <gtest/gtest.h>

#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

TEST(Timeline, RowsPeakAndTenants) {
  auto m = load_model(std::string(TRAINMEM_SOURCE_DIR) + "/validation/configs/qwen3-tiny.json");
  ASSERT_TRUE(m.ok());
  TrainingPlan p;
  p.precision = Precision::bf16;
  const std::string out = render_timeline(estimate(m.value(), p), RenderOptions{});
  EXPECT_EQ(count(out, "◀ peak"), 1u);
  EXPECT_EQ(count(out, "    backward_start"), 2u);
  EXPECT_EQ(count(out, "    optimizer_step"), 2u);
  EXPECT_NE(out.find("first step"), std::string::npos);
  EXPECT_NE(out.find("steady state"), std::string::npos);
  EXPECT_NE(out.find("logits"), std::string::npos);
}

}  // namespace
}  // namespace trainmem

// The verdict: fits, margin, headroom warning, the GB/GiB clash, and --fail-if-over.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

TEST(Fit, TheSeedsClashFitsNothingOnA32GbCard) {
  // Seed 000: 22.9 + 7.5 = 30.4 GiB against 29.8 GiB: does not fit.
  const Device card = custom_device(32 * kGB);
  const Fit f = fit(static_cast<std::int64_t>(30.4 * static_cast<double>(kGiB)), card);
  EXPECT_FALSE(f.fits);
  EXPECT_LT(f.margin_bytes, 0);
  EXPECT_NEAR(in_unit(f.usable_bytes, Unit::gib), 29.80, 0.005);
  EXPECT_EQ(gb_and_gib(32 * kGB), "32.00 GB = 29.80 GiB");
}

TEST(Fit, MarginAndHeadroom) {
  const Device d = custom_device(24 * kGB);
  const Fit roomy = fit(20 * kGB, d);
  EXPECT_TRUE(roomy.fits);
  EXPECT_FALSE(roomy.tight);
  EXPECT_EQ(roomy.margin_bytes, 4 * kGB);
  const Fit tight = fit(23 * kGB, d);
  EXPECT_TRUE(tight.fits);
  EXPECT_TRUE(tight.tight);
  const Fit exact = fit(24 * kGB, d);
  EXPECT_TRUE(exact.fits);
  EXPECT_EQ(exact.margin_bytes, 0);
  const Fit over = fit(24 * kGB + 1, d);
  EXPECT_FALSE(over.fits);
  EXPECT_FALSE(over.tight);
}

TEST(Fit, ReserveComesOffTheCapacity) {
  Device d = *find_device("rtx-4090");
  const Fit f = fit(d.capacity_bytes - d.reserve_bytes / 2, d);
  EXPECT_FALSE(f.fits) << "a peak inside the reserve does not fit";
  EXPECT_EQ(f.usable_bytes, d.capacity_bytes - d.reserve_bytes);
}

TEST(Fit, TextReportStatesBothUnitsAndTheVerdict) {
  const auto model = load_preset("qwen2.5-1.5b");
  ASSERT_TRUE(model);
  TrainingPlan plan;
  plan.batch = 4;
  const Ledger ledger = estimate(model.value(), plan);
  const Fit f = fit(totals(ledger), custom_device(32 * kGB));
  const std::string text = render_text(ledger, &f, RenderOptions{});
  EXPECT_NE(text.find("32.00 GB = 29.80 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find(f.fits ? "Fits" : "Does not fit"), std::string::npos) << text;
  EXPECT_NE(text.find("1.074"), std::string::npos);
  EXPECT_NE(text.find("|=usable limit"), std::string::npos) << "the stacked bar";
}

TEST(Fit, TextReportWarnsWhenHeadroomIsThin) {
  const auto model = load_preset("qwen2.5-1.5b");
  ASSERT_TRUE(model);
  const Ledger ledger = estimate(model.value(), TrainingPlan{});
  const std::int64_t peak = totals(ledger).peak_bytes;
  const Fit f = fit(totals(ledger), custom_device(peak + kHeadroomAdviceBytes / 2));
  ASSERT_TRUE(f.tight);
  const std::string text = render_text(ledger, &f, RenderOptions{});
  EXPECT_NE(text.find("2-3 GB of headroom"), std::string::npos) << text;
}

TEST(Fit, WarnsAboutEmulatedBf16) {
  const auto model = load_preset("qwen3-0.6b");
  ASSERT_TRUE(model);
  const Ledger ledger = estimate(model.value(), TrainingPlan{});
  const Fit t4 = fit(totals(ledger), *find_device("t4"));
  EXPECT_NE(render_text(ledger, &t4, RenderOptions{}).find("no native bf16"), std::string::npos);
  const Fit l4 = fit(totals(ledger), *find_device("l4"));
  EXPECT_EQ(render_text(ledger, &l4, RenderOptions{}).find("no native bf16"), std::string::npos);
}

int run_cli(const std::string& args) {
  const std::string cmd = std::string(TRAINMEM_CLI) + " " + args + " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Fit, FailIfOverExitsThree) {
  EXPECT_EQ(run_cli("estimate qwen3-8b --gpu rtx-4090 --fail-if-over"), 3);
  EXPECT_EQ(run_cli("estimate qwen3-8b --gpu rtx-4090"), 0) << "only on request";
  EXPECT_EQ(run_cli("estimate qwen3-0.6b --method qlora --gpu h200 --fail-if-over"), 0);
  EXPECT_EQ(run_cli("estimate qwen3-8b --gpu rtx4090"), 1) << "unknown device";
}

}  // namespace
}  // namespace trainmem

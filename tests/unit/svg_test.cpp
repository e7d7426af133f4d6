// SVG output is well-formed (balanced tags, escaped text) and has the expected elements.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

// A tiny XML checker: every tag closes in order, attributes are quoted, text has no bare '<' or
// '&'. Returns an empty string when well-formed, else what is wrong.
std::string xml_problem(const std::string& s) {
  std::vector<std::string> open;
  std::size_t i = 0;
  if (s.rfind("<?xml", 0) == 0) i = s.find("?>") + 2;
  bool root_seen = false;
  while (i < s.size()) {
    const std::size_t lt = s.find('<', i);
    const std::string text = s.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    for (std::size_t a = text.find('&'); a != std::string::npos; a = text.find('&', a + 1)) {
      const std::size_t semi = text.find(';', a);
      if (semi == std::string::npos || semi - a > 6) return "bare & in text: " + text;
    }
    if (lt == std::string::npos) break;
    if (open.empty() && root_seen) return "content after the root element";
    const std::size_t gt = s.find('>', lt);
    if (gt == std::string::npos) return "unterminated tag";
    std::string tag = s.substr(lt + 1, gt - lt - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag: " + tag;
    std::size_t quotes = 0;
    for (char c : tag) quotes += c == '"';
    if (quotes % 2 != 0) return "unbalanced quotes: " + tag;
    if (!tag.empty() && tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) return "mismatched </" + name + ">";
      open.pop_back();
    } else if (!tag.empty() && tag.back() == '/') {
      root_seen = true;
    } else {
      const std::string name = tag.substr(0, tag.find_first_of(" \n\t"));
      open.push_back(name);
      root_seen = true;
    }
    i = gt + 1;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Svg, CheckerCatchesBrokenXml) {
  EXPECT_EQ(xml_problem("<svg><rect/></svg>"), "");
  EXPECT_NE(xml_problem("<svg><g></svg>"), "");
  EXPECT_NE(xml_problem("<svg><text>a & b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg x=\"1></svg>"), "");
}

TEST(Svg, BudgetBarIsWellFormedWithTheExpectedElements) {
  const auto m = load_preset("qwen2.5-1.5b");
  ASSERT_TRUE(m);
  TrainingPlan plan;
  plan.batch = 4;
  const Ledger ledger = estimate(m.value(), plan);
  const Fit f = fit(totals(ledger), *find_device("tier-32gb"));
  const std::string svg = render_svg_budget(ledger, &f, RenderOptions{});
  EXPECT_EQ(xml_problem(svg), "") << svg;
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  // One rect per tenant live at the peak, plus background, capacity and legend swatches.
  int tenants = 0;
  for (std::int64_t b : live_at_slot(ledger, totals(ledger).peak_slot)) tenants += b > 0;
  EXPECT_GE(count(svg, "<rect"), static_cast<std::size_t>(2 * tenants + 1));
  EXPECT_NE(svg.find("<line"), std::string::npos) << "the usable limit";
  EXPECT_NE(svg.find("29.80 GiB"), std::string::npos) << "the GB/GiB clash is spelled out";
  EXPECT_NE(svg.find("Weights"), std::string::npos);
  EXPECT_NE(svg.find(f.fits ? "fits" : "does not fit"), std::string::npos);
  // Without a device, still a picture.
  EXPECT_EQ(xml_problem(render_svg_budget(ledger, nullptr, RenderOptions{})), "");
}

TEST(Svg, EscapesModelNames) {
  const auto m = load_preset("qwen3-0.6b");
  ASSERT_TRUE(m);
  Ledger ledger = estimate(m.value(), TrainingPlan{});
  ledger.model.name = "a<b> & \"c\"";
  const std::string svg = render_svg_budget(ledger, nullptr, RenderOptions{});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_NE(svg.find("a&lt;b&gt; &amp; &quot;c&quot;"), std::string::npos);
}

TEST(Svg, SweepCurvesAreWellFormedWithTheLimitDrawn) {
  const auto m = load_preset("qwen3-1.7b");
  ASSERT_TRUE(m);
  TrainingPlan plan;
  plan.method = Method::lora;
  for (SweepAxis axis : {SweepAxis::batch, SweepAxis::seq}) {
    const Sweep s =
        sweep(m.value(), plan, axis, default_sweep_values(axis, plan), *find_device("rtx-4090"));
    const std::string svg = render_svg_sweep(s, RenderOptions{});
    EXPECT_EQ(xml_problem(svg), "") << svg;
    // On a CUDA card the verdict judges the device total (allocator reserve + CUDA context): a
    // third curve, which carries the verdict dots.
    EXPECT_EQ(count(svg, "<polyline"), 3U) << "peak, static state and the device total";
    EXPECT_EQ(count(svg, "<circle"), s.points.size());
    EXPECT_NE(svg.find("device total (the verdict's figure)"), std::string::npos);
    EXPECT_NE(svg.find("stroke-dasharray=\"6,4\""), std::string::npos) << "the usable limit";
    EXPECT_NE(svg.find("rtx-4090"), std::string::npos);
    EXPECT_NE(svg.find(axis == SweepAxis::batch ? "micro-batch" : "sequence length"),
              std::string::npos);
    EXPECT_GE(count(svg, "<text"), 8U) << "title, ticks, labels";
  }
}

// Each dot takes the verdict estimate gives (the device total against usable memory), so a batch
// whose live peak is under the line but whose device total is over is drawn as not fitting. The
// card's reserve is set so that its usable line falls between batch 4's peak and device total.
TEST(Svg, SweepDotsFollowTheVerdict) {
  const auto m = load_preset("llama-3.1-8b");
  ASSERT_TRUE(m);
  TrainingPlan plan;
  plan.method = Method::qlora;
  plan.checkpointing = Checkpointing::full;
  Device gpu = *find_device("rtx-4090");
  const std::vector<std::int64_t> batches{1, 2, 4, 8};
  const SweepPoint at4 = sweep(m.value(), plan, SweepAxis::batch, {4}, gpu).points.at(0);
  ASSERT_TRUE(at4.fit);
  ASSERT_GT(at4.fit->peak_bytes, at4.peak_bytes) << "the device total adds the allocator's cache";
  gpu.reserve_bytes = gpu.capacity_bytes - (at4.peak_bytes + at4.fit->peak_bytes) / 2;
  const Sweep s = sweep(m.value(), plan, SweepAxis::batch, batches, gpu);
  const std::string svg = render_svg_sweep(s, RenderOptions{});
  ASSERT_EQ(s.points.size(), batches.size());
  EXPECT_TRUE(s.points[1].fit->fits);
  EXPECT_FALSE(s.points[2].fit->fits) << "batch 4: its device total is over the line";
  EXPECT_LT(s.points[2].peak_bytes, gpu.usable_bytes()) << "batch 4: its live peak is under it";
  EXPECT_EQ(count(svg, "fill=\"#c0392b\"><title>"), 2U) << "batches 4 and 8";
  EXPECT_EQ(count(svg, "fill=\"#4e79a7\"><title>"), 2U) << "batches 1 and 2";
}

TEST(Svg, TwoAxisPairNestsBothPanels) {
  const auto m = load_preset("qwen3-0.6b");
  ASSERT_TRUE(m);
  const TrainingPlan plan;
  const Device gpu = *find_device("t4");
  const Sweep b = sweep(m.value(), plan, SweepAxis::batch, {1, 2, 4}, gpu);
  const Sweep q = sweep(m.value(), plan, SweepAxis::seq, {256, 512, 1024}, gpu);
  const std::string svg = render_svg_sweep_pair(b, q, RenderOptions{});
  EXPECT_EQ(xml_problem(svg), "") << svg;
  EXPECT_EQ(count(svg, "<svg"), 3U);
  EXPECT_EQ(count(svg, "<?xml"), 1U);
  EXPECT_EQ(count(svg, "<polyline"), 6U) << "peak, static state and device total per panel";
  EXPECT_NE(svg.find("x=\"860\""), std::string::npos);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Svg, CliWritesWellFormedFiles) {
  const auto dir = std::filesystem::temp_directory_path() / "trainmem_svg_test";
  std::filesystem::create_directories(dir);
  const auto budget = dir / "budget.svg";
  const auto curves = dir / "sweep.svg";
  const std::string cli = TRAINMEM_CLI;
  ASSERT_EQ(std::system((cli + " estimate qwen3-0.6b --gpu rtx-4090 --svg " + budget.string() +
                         " > /dev/null")
                            .c_str()),
            0);
  ASSERT_EQ(std::system((cli + " sweep qwen3-0.6b --gpu rtx-4090 --over seq --svg " +
                         curves.string() + " > /dev/null")
                            .c_str()),
            0);
  const std::string b = slurp(budget);
  const std::string c = slurp(curves);
  EXPECT_EQ(xml_problem(b), "");
  EXPECT_EQ(xml_problem(c), "");
  EXPECT_NE(b.find("<rect"), std::string::npos);
  EXPECT_NE(c.find("<polyline"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Svg, EmptySweepIsStillAPicture) {
  Sweep s;
  s.model = "none";
  const std::string svg = render_svg_sweep(s, RenderOptions{});
  EXPECT_EQ(xml_problem(svg), "");
}

TEST(Svg, TerminalStackedBar) {
  const auto m = load_preset("qwen2.5-1.5b");
  ASSERT_TRUE(m);
  const Ledger ledger = estimate(m.value(), TrainingPlan{});
  const Fit f = fit(totals(ledger), custom_device(totals(ledger).peak_bytes * 2));
  const std::string bar = render_text_stacked_bar(ledger, &f, 40);
  const std::string first = bar.substr(0, bar.find('\n'));
  EXPECT_EQ(first.front(), '[');
  EXPECT_EQ(first.back(), ']');
  EXPECT_NE(first.find('W'), std::string::npos);
  EXPECT_NE(first.find('.'), std::string::npos) << "half the device is free";
  EXPECT_NE(first.find('|'), std::string::npos);
  EXPECT_LE(first.size(), 44U);
}

}  // namespace
}  // namespace trainmem

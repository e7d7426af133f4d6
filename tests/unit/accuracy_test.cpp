#include "verdict/accuracy.h"

#include <gtest/gtest.h>

#include "trainmem/validate.h"

namespace trainmem {
namespace {

TEST(Accuracy, PctErrorIsSignedRelativeToMeasured) {
  EXPECT_DOUBLE_EQ(pct_error(110, 100), 10.0);
  EXPECT_DOUBLE_EQ(pct_error(95, 100), -5.0);
  EXPECT_DOUBLE_EQ(pct_error(5, 0), 0.0);
}

TEST(Accuracy, StatsByHand) {
  // |errors| sorted: 1 2 3 4 10 -> median 3, p95 rank ceil(4.75)=5 -> 10, max 10, mean
  // (1-2+3-4+10)/5.
  const ErrorStats s = error_stats({1, -2, 3, -4, 10});
  EXPECT_EQ(s.rows, 5u);
  EXPECT_DOUBLE_EQ(s.median_abs_pct, 3);
  EXPECT_DOUBLE_EQ(s.p95_abs_pct, 10);
  EXPECT_DOUBLE_EQ(s.max_abs_pct, 10);
  EXPECT_DOUBLE_EQ(s.mean_signed_pct, 1.6);
}

TEST(Accuracy, EvenCountMedianAveragesTheMiddlePair) {
  EXPECT_DOUBLE_EQ(error_stats({1, 2, 3, 4}).median_abs_pct, 2.5);
  EXPECT_EQ(error_stats({}).rows, 0u);
}

TEST(Accuracy, ReportSkipsCategoriesNotMeasured) {
  AccuracyRow a{"a", 100, 104, "", "", {50, 0, 0, 0}, {55, 7, 0, 0}, "llama", "", ""};
  AccuracyRow b{"b", 200, 190, "", "", {100, 0, 0, 0}, {100, 0, 0, 0}, "phi", "", ""};
  const AccuracyReport r = accuracy_report({a, b});
  EXPECT_EQ(r.peak.rows, 2u);
  EXPECT_DOUBLE_EQ(r.peak.max_abs_pct, 5);
  EXPECT_EQ(r.by_category[0].rows, 2u);
  EXPECT_DOUBLE_EQ(r.by_category[0].max_abs_pct, 10);
  EXPECT_EQ(r.by_category[1].rows, 0u);  // gradients measured as 0 in both rows
}

TEST(Accuracy, MetricAndSourceStatsInFirstSeenOrder) {
  // allocated: +10 % and -2 % (median |10|, |2| = 6); reserved: -20 %. CPU rows (no metric) out.
  AccuracyRow a{"a", 100, 110, "", "", {}, {}, "", "max_memory_allocated", "litgpt"};
  AccuracyRow b{"b", 100, 80, "", "", {}, {}, "", "max_memory_reserved", "peft"};
  AccuracyRow c{"c", 100, 98, "", "", {}, {}, "", "max_memory_allocated", "peft"};
  AccuracyRow cpu{"cpu", 100, 100, "", "", {}, {}, "llama", "", ""};
  const auto by_metric = metric_stats({a, b, c, cpu});
  ASSERT_EQ(by_metric.size(), 2u);
  EXPECT_EQ(by_metric[0].first, "max_memory_allocated");
  EXPECT_EQ(by_metric[0].second.rows, 2u);
  EXPECT_DOUBLE_EQ(by_metric[0].second.median_abs_pct, 6);
  EXPECT_DOUBLE_EQ(by_metric[1].second.mean_signed_pct, -20);
  const auto by_source = source_stats({a, b, c, cpu});
  ASSERT_EQ(by_source.size(), 2u);
  EXPECT_EQ(by_source[1].first, "peft");
  EXPECT_DOUBLE_EQ(by_source[1].second.max_abs_pct, 20);
  const ValidationReport v = validation_report("f.jsonl", {a, b, c, cpu});
  EXPECT_EQ(v.rows.size(), 4u);
  EXPECT_EQ(v.by_family.size(), 1u);  // only the CPU row has a family
  EXPECT_NE(render_validation_json(v).find("\"by_metric\""), std::string::npos);
  EXPECT_NE(render_validation_text(v).find("4 rows: peak error"), std::string::npos);
}

TEST(Accuracy, FamilyStatsGroupRowsByModelType) {
  // llama: +4 % and -1 %; phi: -5 %. Median of |4|, |1| = 2.5; families sorted by name.
  AccuracyRow a{"a", 100, 104, "", "", {}, {}, "llama", "", ""};
  AccuracyRow b{"b", 200, 190, "", "", {}, {}, "phi", "", ""};
  AccuracyRow c{"c", 100, 99, "", "", {}, {}, "llama", "", ""};
  const auto fams = family_stats({a, b, c});
  ASSERT_EQ(fams.size(), 2u);
  EXPECT_EQ(fams[0].first, "llama");
  EXPECT_EQ(fams[0].second.rows, 2u);
  EXPECT_DOUBLE_EQ(fams[0].second.median_abs_pct, 2.5);
  EXPECT_DOUBLE_EQ(fams[0].second.max_abs_pct, 4);
  EXPECT_EQ(fams[1].first, "phi");
  EXPECT_DOUBLE_EQ(fams[1].second.max_abs_pct, 5);
}

}  // namespace
}  // namespace trainmem

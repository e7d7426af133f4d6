// Units, sizes the user types, dtype sizes, the proportional bar and name suggestions: each with
// hand-computed values.
#include <gtest/gtest.h>

#include "render/bar.h"
#include "trainmem/model.h"
#include "trainmem/render.h"
#include "util/edit_distance.h"

namespace trainmem {
namespace {

TEST(Units, ParseSizeDecimalAndBinary) {
  EXPECT_EQ(parse_size("32GB", "--memory").value(), 32'000'000'000);
  EXPECT_EQ(parse_size("24GiB", "--memory").value(), 24LL << 30);
  EXPECT_EQ(parse_size("24 GiB", "--memory").value(), 24LL << 30);
  EXPECT_EQ(parse_size("81920MiB", "--memory").value(), 81920LL << 20);
  EXPECT_EQ(parse_size("1.5e9B", "--memory").value(), 1'500'000'000);
  EXPECT_EQ(parse_size("2gb", "--reserve").value(), 2'000'000'000);
}

TEST(Units, ParseSizeErrorsNameTheFlag) {
  for (const char* bad : {"", "GB", "32XB", "-4GB", "0", "1e30GB", "nan"}) {
    auto r = parse_size(bad, "--memory");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().field, "--memory") << bad;
  }
}

TEST(Units, ParseCountSuffixes) {
  EXPECT_EQ(parse_count("1.54e9", "--params").value(), 1'540'000'000);
  EXPECT_EQ(parse_count("8.2B", "--params").value(), 8'200'000'000);
  EXPECT_EQ(parse_count("43.7M", "--params").value(), 43'700'000);
  EXPECT_EQ(parse_count("124,000,000", "--params").value(), 124'000'000);
  EXPECT_FALSE(parse_count("7 parsecs", "--params").ok());
}

TEST(Units, Formatting) {
  EXPECT_EQ(with_commas(1'543'714'304), "1,543,714,304");
  EXPECT_EQ(with_commas(-1234), "-1,234");
  EXPECT_EQ(with_commas(999), "999");
  EXPECT_EQ(format_bytes(24'640'000'000, Unit::gb), "24.64 GB");
  EXPECT_EQ(format_bytes(24'640'000'000, Unit::gib), "22.95 GiB");  // 24.64e9 / 2^30
  EXPECT_EQ(format_bytes(3 << 20, Unit::mib), "3.00 MiB");
  EXPECT_EQ(format_bytes(1234, Unit::bytes), "1,234 bytes");
  EXPECT_EQ(short_count(8'190'735'360), "8.19B");
  EXPECT_EQ(short_count(43'646'976), "43.6M");
}

TEST(Dtype, SizesAndNames) {
  EXPECT_EQ(dense_bytes(Dtype::bf16, 10), 20);
  EXPECT_EQ(dense_bytes(Dtype::f32, 10), 40);
  EXPECT_EQ(dense_bytes(Dtype::nf4, 3), 2);  // 12 bits round up to 2 bytes
  EXPECT_EQ(parse_dtype("bfloat16"), Dtype::bf16);
  EXPECT_EQ(parse_dtype("BF16"), Dtype::bf16);
  EXPECT_EQ(parse_dtype("float32"), Dtype::f32);
  EXPECT_EQ(parse_dtype("F8_E4M3"), Dtype::f8_e4m3);
  EXPECT_FALSE(parse_dtype("bf17").has_value());
}

TEST(Render, ProportionalBar) {
  EXPECT_EQ(proportional_bar(1, 4, 4), "█···");
  EXPECT_EQ(proportional_bar(2, 4, 4), "██··");
  EXPECT_EQ(proportional_bar(9, 4, 4), "████");  // clamped
  EXPECT_EQ(proportional_bar(1, 0, 3), "···");   // no scale, no fill
}

TEST(EditDistance, ByHand) {
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("qwen3-8", "qwen3-8b"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("rtx4090", "rtx-4090"), 1u);
}

TEST(EditDistance, NearestNameWithinTheBound) {
  const std::vector<std::string> names = {"estimate", "explain", "emit"};
  EXPECT_EQ(nearest_name("estmate", names, 3), "estimate");  // 1 edit
  EXPECT_EQ(nearest_name("emti", names, 3), "emit");         // 2 edits (a swap)
  EXPECT_EQ(nearest_name("zzzzzz", names, 3), "");           // nothing within 2
  EXPECT_EQ(nearest_name("explian", names, 2), "");          // 2 edits is not below 2
}

}  // namespace
}  // namespace trainmem

// util/checked.h by hand: products and sums at the edge of int64, saturation that sticks.
#include "util/checked.h"

#include <gtest/gtest.h>

#include "trainmem/model.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

TEST(Checked, MultiplyAtTheEdge) {
  EXPECT_EQ(checked_mul(std::int64_t{1} << 31, std::int64_t{1} << 31), std::int64_t{1} << 62);
  EXPECT_FALSE(checked_mul(std::int64_t{1} << 32, std::int64_t{1} << 31).has_value());  // 2^63
  EXPECT_EQ(checked_mul(3'037'000'499, 3'037'000'499), 9'223'372'030'926'249'001);
  EXPECT_FALSE(checked_mul(3'037'000'500, 3'037'000'500).has_value());
}

TEST(Checked, AddAndProduct) {
  EXPECT_EQ(checked_add(kSaturated - 1, 1), kSaturated);
  EXPECT_FALSE(checked_add(kSaturated, 1).has_value());
  EXPECT_EQ(checked_product({1024, 1024, 1024}), std::int64_t{1} << 30);
  EXPECT_FALSE(checked_product({std::int64_t{1} << 40, std::int64_t{1} << 20, 8}).has_value());
}

TEST(Checked, SaturationSticks) {
  EXPECT_EQ(sat_mul(std::int64_t{1} << 40, std::int64_t{1} << 30), kSaturated);
  EXPECT_EQ(sat_mul(kSaturated, 0), 0);  // nothing of anything is still nothing
  EXPECT_EQ(sat_add(kSaturated, 0), kSaturated);
  EXPECT_EQ(sat_add(sat_mul(kSaturated, 2), 5), kSaturated);
  EXPECT_EQ(sat_add(-1, 5), kSaturated);  // a negative count is a bug, never a small number
  EXPECT_EQ(sat_mul(6, 7), 42);
}

TEST(Checked, DenseBytesNeverWraps) {
  // 2^60 bf16 elements are 2^61 bytes; the old count x bits (2^64) wrapped to 0.
  EXPECT_EQ(dense_bytes(Dtype::bf16, std::int64_t{1} << 60), std::int64_t{1} << 61);
  EXPECT_EQ(dense_bytes(Dtype::f32, std::int64_t{1} << 62), kSaturated);
  EXPECT_EQ(dense_bytes(Dtype::nf4, 3), 2);  // 12 bits round up to 2 bytes
  EXPECT_EQ(dense_bytes(Dtype::nf4, 17), 9);
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

// flags_fuzz's finding: a size that rounds to 0 bytes was accepted as 0.
TEST(Checked, SizesThatRoundToZeroAreRefused) {
  EXPECT_FALSE(parse_size("0.4", "--memory").ok());
  EXPECT_FALSE(parse_count("0.2", "--params").ok());
  // A bare number is refused for its missing unit (docs/formats.md); 0.5 bytes rounds up to 1.
  EXPECT_FALSE(parse_size("0.5", "--memory").ok());
}

}  // namespace
}  // namespace trainmem

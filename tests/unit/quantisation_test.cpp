// Block-quantised storage (bitsandbytes 4-bit and int8) against hand-computed bytes.
#include "plan/quantisation.h"

#include <gtest/gtest.h>

namespace trainmem {
namespace {

QuantPlan quant(QuantKind kind, bool double_quant) {
  QuantPlan q;
  q.kind = kind;
  q.double_quant = double_quant;
  return q;
}

struct Case {
  QuantKind kind;
  bool double_quant;
  std::vector<std::int64_t> shape;
  std::int64_t bytes;
};

// 4096 x 4096 = 16,777,216 weights: 8,388,608 packed bytes and 262,144 blocks of 64.
const Case kCases[] = {
    // fp32 absmax per block: + 262,144 x 4.
    {QuantKind::nf4, false, {4096, 4096}, 8'388'608 + 1'048'576},
    // double quant: 8-bit absmax + one fp32 per 256 blocks: + 262,144 + 1,024 x 4.
    {QuantKind::nf4, true, {4096, 4096}, 8'388'608 + 262'144 + 4'096},
    {QuantKind::fp4, true, {4096, 4096}, 8'388'608 + 262'144 + 4'096},
    // Partial blocks round up: 100 weights = 50 bytes + 2 blocks, 1 second-level block.
    {QuantKind::nf4, true, {100}, 50 + 2 + 4},
    {QuantKind::nf4, false, {100}, 50 + 2 * 4},
    // int8 (LLM.int8): one byte per weight + an fp32 scale per output row.
    {QuantKind::int8, true, {4096, 1024}, 4096LL * 1024 + 4096 * 4},
};

class Quantised : public ::testing::TestWithParam<Case> {};

TEST_P(Quantised, HandComputedBytes) {
  const Case& c = GetParam();
  EXPECT_EQ(quantised_bytes(quant(c.kind, c.double_quant), c.shape), c.bytes);
}

INSTANTIATE_TEST_SUITE_P(Table, Quantised, ::testing::ValuesIn(kCases));

TEST(Quantised, BitsPerWeight) {
  EXPECT_DOUBLE_EQ(quantised_bits_per_weight(quant(QuantKind::nf4, false)), 4.5);
  EXPECT_DOUBLE_EQ(quantised_bits_per_weight(quant(QuantKind::nf4, true)),
                   4.0 + 8.0 / 64 + 32.0 / (64 * 256));
  EXPECT_DOUBLE_EQ(quantised_bits_per_weight(quant(QuantKind::int8, true)), 8.0);
}

TEST(Quantised, FormulaNamesTheConstants) {
  EXPECT_NE(quantised_formula(quant(QuantKind::nf4, true), 1000).find("8-bit absmax"),
            std::string::npos);
  EXPECT_NE(quantised_formula(quant(QuantKind::nf4, false), 1000).find("fp32 absmax"),
            std::string::npos);
}

}  // namespace
}  // namespace trainmem

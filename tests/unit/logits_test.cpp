// Logits and loss lines per --loss, with their phases: HF's 10 N V forward peak and 12 N V at the
// start of backward (accounting.md 4.2), TRL's chunk, Liger's fused chunk (hand-computed).
#include <gtest/gtest.h>

#include <string>

#include "support/models.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

std::int64_t logits_in(const Ledger& l, int step, Phase p) {
  std::int64_t n = 0;
  for (const LedgerItem& i : l.items) {
    if (i.tenant == Tenant::logits && (i.live & phase_bit(step, p))) n += i.bytes;
  }
  return n;
}

constexpr std::int64_t kNV = 2 * 128 * 8192;  // b2 x s128 tokens x V 8192

TEST(Logits, FullLossPhases) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 128;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  EXPECT_EQ(logits_in(l, 1, Phase::forward), 10 * kNV);
  EXPECT_EQ(logits_in(l, 1, Phase::end_of_forward), 4 * kNV);
  EXPECT_EQ(logits_in(l, 1, Phase::backward_start), 12 * kNV);
  EXPECT_EQ(logits_in(l, 1, Phase::backward), 0);
}

const LedgerItem* line(const Ledger& l, const std::string& id) {
  for (const LedgerItem& i : l.items) {
    if (i.id == id) return &i;
  }
  return nullptr;
}

// torch.compile'd loss (validation/data/compile-loss-probe-torch2.5.1.json): the bf16 logits stay
// saved, plus the row max and logsumexp (2 x 4 B x 256 rows = 2,048 B); no upcast, no
// log_softmax; backward writes one bf16 gradient (2 x 256 x 8,192 = 4,194,304 B).
TEST(Logits, CompiledLossSavesTheLogitsAndTwoFloatsPerRow) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 128;
  p.behaviour.compiled_loss = true;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  const LedgerItem* stats = line(l, "logits.compiled_row_stats");
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->bytes, 2048);
  const LedgerItem* grads = line(l, "logits.loss_grads");
  ASSERT_NE(grads, nullptr);
  EXPECT_EQ(grads->bytes, 4194304);
  EXPECT_EQ(line(l, "logits.fp32_upcast"), nullptr);
  EXPECT_EQ(line(l, "logits.log_softmax"), nullptr);
  EXPECT_EQ(line(l, "logits.shift_copy"), nullptr);
  EXPECT_EQ(logits_in(l, 1, Phase::forward), 2 * kNV + 2048);
  EXPECT_EQ(logits_in(l, 1, Phase::end_of_forward), 2 * kNV + 2048);
  EXPECT_EQ(logits_in(l, 1, Phase::backward_start), 4 * kNV + 2048);
  EXPECT_EQ(logits_in(l, 1, Phase::backward), 0);
}

TEST(Logits, Fp32ModelHasNoUpcast) {
  TrainingPlan p;
  p.precision = Precision::fp32;
  p.batch = 2;
  p.seq = 128;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  EXPECT_EQ(logits_in(l, 1, Phase::forward), 8 * kNV);
  EXPECT_EQ(logits_in(l, 1, Phase::backward_start), 12 * kNV);
}

// TRL's chunked_nll (logits.cpp trl_chunked_loss) on qwen3-tiny (V 8,192, H 128), bf16, batch
// 4 x 1,024: 4,092 shifted tokens, chunks of 256. Kept: 4,092 x (128 x 2 + 16) = 1,113,024 B.
// Forward chunk: max(16 x 256 x 8,192 = 33,554,432, 4 x 8,192 x 128 + 4 x 256 x (128 + 8,192)
// = 12,713,984), plus the final norm's output 4,096 x 128 x 2 = 1,048,576 when the lm_head trains.
// Backward chunk: the weight copy 4,194,304 (and its gradient when the lm_head trains) +
// 16 x 256 x 8,192 + 8 x 256 x 128 = 33,816,576.
TEST(Logits, ChunkedIsTrlsChunkedNll) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 4;
  p.seq = 1024;
  p.loss = Loss::chunked;
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  const Ledger full = estimate(m, p);
  const std::int64_t kept = 1'113'024;
  EXPECT_EQ(logits_in(full, 1, Phase::forward), kept + 33'554'432 + 1'048'576);
  EXPECT_EQ(logits_in(full, 1, Phase::end_of_forward), kept);
  EXPECT_EQ(logits_in(full, 1, Phase::backward_start), kept + 2 * 4'194'304 + 33'816'576);
  EXPECT_EQ(logits_in(full, 1, Phase::backward), 0);
  EXPECT_EQ(line(full, "logits.output"), nullptr);  // no logits of the whole batch
  // The lm_head frozen (LoRA): no gradient of the copy, no norm output counted here.
  p.method = Method::lora;
  const Ledger lora = estimate(m, p);
  EXPECT_EQ(logits_in(lora, 1, Phase::forward), kept + 33'554'432);
  EXPECT_EQ(logits_in(lora, 1, Phase::backward_start), kept + 4'194'304 + 33'816'576);
  // fp32 weights under autocast: no .float() copy, the matmul's bf16 cast of the weight instead.
  p.method = Method::full;
  p.precision = Precision::autocast_bf16;
  const Ledger mixed = estimate(m, p);
  const LedgerItem* backward = line(mixed, "logits.chunked_backward");
  ASSERT_NE(backward, nullptr);
  EXPECT_EQ(backward->bytes, 2 * 2'097'152 + 33'816'576);
  EXPECT_TRUE(backward->estimated);
}

TEST(Logits, FusedLinearCrossEntropy) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 128;
  p.loss = Loss::fused;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  // chunk = next_pow2(ceil(256 / ceil(8192 / 128))) = 4 tokens; grad_input 256 x 128 x 2;
  // grad_weight 8192 x 128 x 2 (lm_head trains).
  const std::int64_t chunk = 4 * 8192 * 2;
  const std::int64_t held = 256 * 128 * 2 + 8192 * 128 * 2;
  EXPECT_EQ(logits_in(l, 1, Phase::forward), chunk + held);
  EXPECT_EQ(logits_in(l, 1, Phase::backward_start), held);
}

TEST(Logits, TextbookIsBf16Logits) {
  TrainingPlan p;
  p.convention = Convention::textbook;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  EXPECT_EQ(logits_in(l, 0, Phase::loaded), 1024 * 8192 * 2);
}

}  // namespace
}  // namespace trainmem

// The temporaries tenant's lines against hand-computed bytes: a tied embedding's accumulation at
// the end of backward, and the foreach AdamW step's scratch in the states' dtype.
#include <gtest/gtest.h>

#include <string>

#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

LoadedModel qwen3_0_6b() {
  auto m = load_preset("qwen3-0.6b");
  EXPECT_TRUE(m.ok());
  return m.value();
}

std::int64_t line_bytes(const Ledger& l, const std::string& id) {
  for (const LedgerItem& i : l.items) {
    if (i.id == id) return i.bytes;
  }
  return -1;
}

// Qwen3-0.6B ties its embedding (V 151,936, h 1,024). At the end of backward the embedding's dense
// gradient and its out-of-place sum with lm_head's (torch/csrc/autograd/input_buffer.cpp) are
// live beside the gradients: 2 x 151,936 x 1,024 x 2 B (bf16) = 622,329,856 B; under autocast
// the weights and so the gradients are fp32: 1,244,659,712 B.
TEST(Temporaries, TiedEmbeddingAccumulationIsTwoDenseGradients) {
  const LoadedModel m = qwen3_0_6b();
  TrainingPlan p;
  p.precision = Precision::bf16;
  EXPECT_EQ(line_bytes(estimate(m, p), "temporaries.tied_embedding_grad"), 622'329'856);
  p.precision = Precision::autocast_bf16;
  EXPECT_EQ(line_bytes(estimate(m, p), "temporaries.tied_embedding_grad"), 1'244'659'712);
}

// _foreach_sqrt(exp_avg_sq) returns v's dtype. Full fine-tune in pure bf16: 596,049,920 params x
// 2 B = 1,192,099,840 B. LoRA r16 on every linear layer keeps its 10,092,544 adapter params in
// fp32 (PEFT's autocast_adapter_dtype), and so their states and the scratch: x 4 B = 40,370,176 B.
TEST(Temporaries, ForeachScratchIsInTheStatesDtype) {
  const LoadedModel m = qwen3_0_6b();
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.optimizer_impl = OptimizerImpl::foreach;
  EXPECT_EQ(line_bytes(estimate(m, p), "temporaries.optimizer_step"), 1'192'099'840);
  p.method = Method::lora;
  p.lora.rank = 16;
  p.lora.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  EXPECT_EQ(line_bytes(estimate(m, p), "temporaries.optimizer_step"), 40'370'176);
}

}  // namespace
}  // namespace trainmem

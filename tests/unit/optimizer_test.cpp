// The optimizer table, row by row, against hand-computed state and scratch bytes
// (research/accounting.md section 5).
#include "plan/optimizer.h"

#include <gtest/gtest.h>

namespace trainmem {
namespace {

constexpr std::int64_t kN = 4096LL * 4096;  // one 4096 x 4096 matrix

struct StateCase {
  OptimizerKind kind;
  std::vector<std::int64_t> shape;
  Dtype state_dtype;
  std::int64_t bytes;
};

const StateCase kStates[] = {
    // torch AdamW: exp_avg + exp_avg_sq like the param: 2 x 4 B in fp32, 2 x 2 B in bf16.
    {OptimizerKind::adamw, {4096, 4096}, Dtype::f32, 2 * 4 * kN},
    {OptimizerKind::adamw, {4096, 4096}, Dtype::bf16, 2 * 2 * kN},
    // bitsandbytes 8-bit: 2 x (n + n/256 x 4) = 2.031 B/param.
    {OptimizerKind::adamw_8bit, {4096, 4096}, Dtype::f32, 2 * (kN + kN / 256 * 4)},
    {OptimizerKind::adamw_8bit, {4096, 4096}, Dtype::bf16, 2 * (kN + kN / 256 * 4)},
    // Under 4096 elements the state stays 32-bit; at 4096 it is 8-bit (16 blocks).
    {OptimizerKind::adamw_8bit, {1024}, Dtype::f32, 2 * 4 * 1024},
    {OptimizerKind::adamw_8bit, {4095}, Dtype::f32, 2 * 4 * 4095},
    {OptimizerKind::adamw_8bit, {4096}, Dtype::f32, 2 * (4096 + 16 * 4)},
    // Paged 32-bit AdamW: fp32 states whatever the param dtype; paged 8-bit like 8-bit.
    {OptimizerKind::paged_adamw, {4096, 4096}, Dtype::bf16, 2 * 4 * kN},
    {OptimizerKind::paged_adamw_8bit, {4096, 4096}, Dtype::bf16, 2 * (kN + kN / 256 * 4)},
    // Adafactor: row + column fp32 accumulators for a matrix, a full one for a vector.
    {OptimizerKind::adafactor, {4096, 4096}, Dtype::f32, (4096 + 4096) * 4},
    {OptimizerKind::adafactor, {1000, 4096}, Dtype::bf16, (1000 + 4096) * 4},
    {OptimizerKind::adafactor, {4096}, Dtype::f32, 4096 * 4},
    // A zero-width matrix (safetensors allows it): no rows, no columns (estimate_fuzz finding).
    {OptimizerKind::adafactor, {64, 0}, Dtype::f32, 0},
    // SGD keeps nothing; momentum and Lion one buffer like the param.
    {OptimizerKind::sgd, {4096, 4096}, Dtype::f32, 0},
    {OptimizerKind::sgd_momentum, {4096, 4096}, Dtype::f32, 4 * kN},
    {OptimizerKind::sgd_momentum, {4096, 4096}, Dtype::bf16, 2 * kN},
    {OptimizerKind::lion, {4096, 4096}, Dtype::f32, 4 * kN},
    // Adam-mini: full m, one v per output row in the state dtype; a vector's v is a scalar.
    {OptimizerKind::adam_mini, {4096, 4096}, Dtype::f32, 4 * kN + 4096 * 4},
    {OptimizerKind::adam_mini, {4096, 4096}, Dtype::bf16, 2 * kN + 4096 * 2},
    {OptimizerKind::adam_mini, {4096}, Dtype::f32, 4 * 4096},
    // bitsandbytes 32-bit AdamW and Lion: fp32 states whatever the parameter's dtype.
    {OptimizerKind::adamw_32bit, {4096, 4096}, Dtype::bf16, 2 * 4 * kN},
    {OptimizerKind::lion_32bit, {4096, 4096}, Dtype::bf16, 4 * kN},
    {OptimizerKind::paged_lion, {4096, 4096}, Dtype::bf16, 4 * kN},
    {OptimizerKind::paged_lion_8bit, {4096, 4096}, Dtype::bf16, kN + kN / 256 * 4},
    // bitsandbytes RMSprop: one state; AdEMAMix: three (m1 and m2 in one (2, ...) buffer, nu).
    {OptimizerKind::rmsprop_32bit, {4096, 4096}, Dtype::bf16, 4 * kN},
    {OptimizerKind::rmsprop_8bit, {4096, 4096}, Dtype::bf16, kN + kN / 256 * 4},
    {OptimizerKind::ademamix, {4096, 4096}, Dtype::bf16, 3 * 4 * kN},
    {OptimizerKind::ademamix_8bit, {4096, 4096}, Dtype::bf16, 3 * (kN + kN / 256 * 4)},
    {OptimizerKind::ademamix_8bit, {4095}, Dtype::bf16, 3 * 4 * 4095},
    // Muon: one momentum buffer for a hidden matrix; AdamW's two states for a vector.
    {OptimizerKind::muon, {4096, 4096}, Dtype::f32, 4 * kN},
    {OptimizerKind::muon, {4096}, Dtype::f32, 2 * 4 * 4096},
};

class OptimizerState : public ::testing::TestWithParam<StateCase> {};

TEST_P(OptimizerState, HandComputedBytes) {
  const StateCase& c = GetParam();
  EXPECT_EQ(optimizer_state_bytes(optimizer_row(c.kind), c.shape, c.state_dtype), c.bytes)
      << optimizer_row(c.kind).name;
}

INSTANTIATE_TEST_SUITE_P(Table, OptimizerState, ::testing::ValuesIn(kStates));

TEST(Optimizer, MuonEmbeddingFallsBackToAdamW) {
  const OptimizerRow& muon = optimizer_row(OptimizerKind::muon);
  EXPECT_EQ(optimizer_state_bytes(muon, {151936, 4096}, Dtype::f32, {.adamw_fallback = true}),
            2 * 4 * 151936 * 4096LL);
}

TEST(Optimizer, EveryKindHasOneRowWithASource) {
  for (const OptimizerRow& row : optimizer_table()) {
    EXPECT_EQ(&optimizer_row(row.kind), &row) << row.name;
    EXPECT_FALSE(row.source.empty()) << row.name;
    EXPECT_EQ(name_of(row.kind), row.name);
  }
  EXPECT_EQ(optimizer_table().size(), 21U);
}

// bitsandbytes pages state1/state2 of tensors of at least 1e5 elements; their 8-bit absmax
// blocks and every smaller tensor's state stay in PyTorch's pool.
TEST(Optimizer, PagedStateIsTheLargeTensorsBuffers) {
  const OptimizerRow& paged32 = optimizer_row(OptimizerKind::paged_adamw);
  const OptimizerRow& paged8 = optimizer_row(OptimizerKind::paged_adamw_8bit);
  EXPECT_EQ(paged_state_bytes(paged32, {4096, 4096}), 2 * 4 * kN);
  EXPECT_EQ(paged_state_bytes(paged8, {4096, 4096}), 2 * kN);  // absmax (2 x kN/256 x 4) pooled
  EXPECT_EQ(optimizer_state_bytes(paged8, {4096, 4096}, Dtype::f32) -
                paged_state_bytes(paged8, {4096, 4096}),
            2 * kN / 256 * 4);
  EXPECT_EQ(paged_state_bytes(paged32, {99'999}), 0);
  EXPECT_EQ(paged_state_bytes(paged32, {100'000}), 2 * 4 * 100'000);
  EXPECT_EQ(paged_state_bytes(optimizer_row(OptimizerKind::adamw_8bit), {4096, 4096}), 0);
}

TEST(Optimizer, Lion8bitKeepsOneBlockwiseState) {
  // 1,000,000 elements: 1,000,000 uint8 + ceil(1e6 / 256) = 3,907 fp32 absmax = 1,015,628 B.
  const OptimizerRow& lion8 = optimizer_row(OptimizerKind::lion_8bit);
  EXPECT_EQ(optimizer_state_bytes(lion8, {1000, 1000}, Dtype::bf16), 1'015'628);
}

TEST(Optimizer, OnlyPagedRowsArePaged) {
  for (const OptimizerRow& row : optimizer_table()) {
    EXPECT_EQ(row.paged, row.name.starts_with("paged-")) << row.name;
  }
  // PagedLion's fp32 state of a large tensor is paged; PagedLion8bit's uint8 one.
  EXPECT_EQ(paged_state_bytes(optimizer_row(OptimizerKind::paged_lion), {4096, 4096}), 4 * kN);
  EXPECT_EQ(paged_state_bytes(optimizer_row(OptimizerKind::paged_lion_8bit), {4096, 4096}), kN);
}

// Adam-mini (adam_mini.py v1.1.1) shares one second moment per head block of hidden² / heads
// elements in q and k: Llama-3.1-8B's q (4096 x 4096, 32 heads) has 32 values, its k
// (1024 x 4096) 8; with head_dim 128 and hidden 1024 / 16 heads (Qwen3-0.6B), blocks of 65,536
// elements: q (2048 x 1024) has 32. Other matrices one per row; adapters too.
// The HF Trainer keeps an embedding table's bitsandbytes states 32-bit under an 8-bit optimizer:
// Llama-3.1-8B's 128,256 x 4,096 table with AdamW8bit is 2 x 4 B per element (4.2 GB) instead
// of 2 x (1 + 4/256) B; paged, both fp32 buffers are paged. The lm_head is a Linear: 8-bit.
TEST(Optimizer, EmbeddingTablesKeep32BitStatesUnderTheHfOverride) {
  const std::int64_t n = 128256LL * 4096;
  ModelSpec spec;
  TensorGroup table{.name = "embed_tokens", .role = Role::embedding, .shape = {128256, 4096}};
  TensorGroup head{.name = "lm_head", .role = Role::lm_head, .shape = {128256, 4096}};
  const OptimizerRow& adam8 = optimizer_row(OptimizerKind::adamw_8bit);
  EXPECT_EQ(optimizer_state_bytes(adam8, table.shape, Dtype::bf16, tensor_use(table, spec, true)),
            2 * 4 * n);
  EXPECT_EQ(optimizer_state_bytes(adam8, table.shape, Dtype::bf16, tensor_use(table, spec, false)),
            2 * (n + n / 256 * 4));
  EXPECT_EQ(optimizer_state_bytes(adam8, head.shape, Dtype::bf16, tensor_use(head, spec, true)),
            2 * (n + n / 256 * 4));
  const OptimizerRow& paged8 = optimizer_row(OptimizerKind::paged_adamw_8bit);
  EXPECT_EQ(paged_state_bytes(paged8, table.shape, tensor_use(table, spec, true)), 2 * 4 * n);
  // Rows that are not 8-bit are untouched: torch AdamW keeps the states' dtype.
  EXPECT_EQ(optimizer_state_bytes(optimizer_row(OptimizerKind::adamw), table.shape, Dtype::bf16,
                                  tensor_use(table, spec, true)),
            2 * 2 * n);
}

TEST(Optimizer, AdamMiniSharesOneSecondMomentPerHeadBlockOfQAndK) {
  const OptimizerRow& mini = optimizer_row(OptimizerKind::adam_mini);
  ModelSpec llama;
  llama.hidden = 4096;
  llama.heads = 32;
  TensorGroup q{.name = "q", .role = Role::q, .shape = {4096, 4096}};
  TensorGroup k{.name = "k", .role = Role::k, .shape = {1024, 4096}};
  EXPECT_EQ(optimizer_state_bytes(mini, q.shape, Dtype::bf16, tensor_use(q, llama, false)),
            2 * kN + 32 * 2);
  EXPECT_EQ(optimizer_state_bytes(mini, k.shape, Dtype::bf16, tensor_use(k, llama, false)),
            2 * 1024 * 4096 + 8 * 2);
  ModelSpec qwen;
  qwen.hidden = 1024;
  qwen.heads = 16;
  TensorGroup q3{.name = "q", .role = Role::q, .shape = {2048, 1024}};
  EXPECT_EQ(optimizer_state_bytes(mini, q3.shape, Dtype::f32, tensor_use(q3, qwen, false)),
            4 * 2048 * 1024 + 32 * 4);
  TensorGroup lora{.name = "q.lora_A", .role = Role::q, .shape = {16, 4096}};
  lora.adapter = AdapterPart::lora_a;
  EXPECT_EQ(tensor_use(lora, llama, false).block_elements, 0);
  // Biases get plain Adam's full v (adam_block_names = {"bias"}): Qwen2's q bias, m + v.
  TensorGroup bias{.name = "q.bias", .role = Role::q, .is_bias = true, .shape = {4096}};
  EXPECT_EQ(optimizer_state_bytes(mini, bias.shape, Dtype::bf16, tensor_use(bias, llama, false)),
            2 * 2 * 4096);
  TensorGroup head{.name = "lm_head", .role = Role::lm_head, .shape = {128256, 4096}};
  EXPECT_TRUE(tensor_use(head, llama, false).adamw_fallback);
  EXPECT_EQ(tensor_use(head, llama, false).block_elements, 0);
}

struct ScratchCase {
  OptimizerKind kind;
  OptimizerImpl impl;
  std::int64_t bytes;  // for 1,000 params in all, the largest tensor 10, states bf16
};

const ScratchCase kScratch[] = {
    {OptimizerKind::adamw, OptimizerImpl::foreach, 2000},  // _foreach_sqrt: a copy of v
    {OptimizerKind::adamw, OptimizerImpl::fused, 0},       // one in-place kernel
    {OptimizerKind::adamw, OptimizerImpl::for_loop, 20},   // one tensor at a time
    {OptimizerKind::adamw_8bit, OptimizerImpl::foreach, 0},
    {OptimizerKind::paged_adamw, OptimizerImpl::foreach, 0},
    {OptimizerKind::paged_adamw_8bit, OptimizerImpl::foreach, 0},
    // bf16 parameters: grad.float(), p.float(), the update and its negation, 4 B each.
    {OptimizerKind::adafactor, OptimizerImpl::foreach, 4 * 4 * 10},
    {OptimizerKind::sgd, OptimizerImpl::foreach, 0},
    {OptimizerKind::sgd_momentum, OptimizerImpl::foreach, 0},
    {OptimizerKind::lion, OptimizerImpl::foreach, 0},
    {OptimizerKind::adam_mini, OptimizerImpl::foreach, 0},
    {OptimizerKind::muon, OptimizerImpl::foreach, 4 * 2 * 10},
    // bitsandbytes' 32-bit kernels update in place (one CUDA kernel per tensor).
    {OptimizerKind::adamw_32bit, OptimizerImpl::foreach, 0},
    {OptimizerKind::lion_32bit, OptimizerImpl::foreach, 0},
    {OptimizerKind::paged_lion, OptimizerImpl::foreach, 0},
    {OptimizerKind::paged_lion_8bit, OptimizerImpl::foreach, 0},
    {OptimizerKind::rmsprop_32bit, OptimizerImpl::foreach, 0},
    {OptimizerKind::rmsprop_8bit, OptimizerImpl::foreach, 0},
    {OptimizerKind::ademamix, OptimizerImpl::foreach, 0},
    {OptimizerKind::ademamix_8bit, OptimizerImpl::foreach, 0},
    {OptimizerKind::paged_ademamix, OptimizerImpl::foreach, 0},
    {OptimizerKind::paged_ademamix_8bit, OptimizerImpl::foreach, 0},
};

class OptimizerScratch : public ::testing::TestWithParam<ScratchCase> {};

TEST_P(OptimizerScratch, HandComputedBytes) {
  const ScratchCase& c = GetParam();
  EXPECT_EQ(optimizer_step_scratch_bytes(optimizer_row(c.kind), c.impl, 1000, 10, Dtype::bf16),
            c.bytes)
      << optimizer_row(c.kind).name;
}

INSTANTIATE_TEST_SUITE_P(Table, OptimizerScratch, ::testing::ValuesIn(kScratch));

// An fp32 parameter is stepped in place: no upcast copies, only the update and its negation
// (transformers/optimization.py Adafactor.step).
TEST(OptimizerScratch, AdafactorOnFp32ParametersHoldsTwoCopies) {
  const OptimizerRow& row = optimizer_row(OptimizerKind::adafactor);
  EXPECT_EQ(optimizer_step_scratch_bytes(row, OptimizerImpl::foreach, 1000, 10, Dtype::f32),
            2 * 4 * 10);
  EXPECT_EQ(optimizer_step_scratch_formula(row, OptimizerImpl::foreach, 1000, 10, Dtype::f32),
            "2 fp32 copies of the largest tensor (fp32 parameters): 2 x 10 x 4 B");
}

}  // namespace
}  // namespace trainmem

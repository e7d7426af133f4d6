// The peak over the phases of a step: where it falls, what is live there, the first step versus
// the steady state, and gradient accumulation.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/models.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

int slot(int step, Phase p) {
  return step * kPhaseCount + static_cast<int>(p);
}

std::int64_t tenant_in(const Ledger& l, Tenant t, int s) {
  std::int64_t n = 0;
  for (const LedgerItem& i : l.items) {
    if (i.tenant == t && (i.live & (PhaseMask{1} << s))) n += i.bytes;
  }
  return n;
}

TEST(Phases, PeakAtBackwardStartOfTheSteadyState) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 128;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  const Totals t = totals(l);
  EXPECT_EQ(t.peak_slot, slot(1, Phase::backward_start));
  // No parameter gradient exists yet at the start of backward (grad_accum 1).
  EXPECT_EQ(tenant_in(l, Tenant::gradients, slot(1, Phase::backward_start)), 0);
  EXPECT_GT(tenant_in(l, Tenant::gradients, slot(1, Phase::backward)), 0);
  // Optimizer state is created by the first step() only.
  EXPECT_EQ(tenant_in(l, Tenant::optimizer_states, slot(0, Phase::backward_start)), 0);
  EXPECT_GT(tenant_in(l, Tenant::optimizer_states, slot(1, Phase::backward_start)), 0);
  // Saved activations are freed by the end of backward.
  EXPECT_LT(tenant_in(l, Tenant::activations, slot(1, Phase::end_of_backward)),
            tenant_in(l, Tenant::activations, slot(1, Phase::backward_start)) / 100);
}

TEST(Phases, GradientAccumulationKeepsGradientsAtBackwardStart) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.grad_accum = 4;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  EXPECT_GT(tenant_in(l, Tenant::gradients, slot(1, Phase::backward_start)), 0);
  EXPECT_GT(tenant_in(l, Tenant::gradients, slot(1, Phase::forward)), 0);
  // At the optimizer-step boundary (where a framework evaluates between steps) zero_grad has
  // freed them.
  EXPECT_EQ(tenant_in(l, Tenant::gradients, slot(1, Phase::loaded)), 0);
}

// The engine runs the input embedding's backward last: its gradient (8,192 x 128 x 2 B in bf16)
// is absent while the layers' backward runs and present from the end of backward. Under
// accumulation an earlier micro-batch's is there throughout.
TEST(Phases, EmbeddingGradientIsMadeAfterTheLayers) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");  // untied, V 8192, h 128
  const Ledger l = estimate(m, p);
  const std::int64_t embedding_grad = 8192 * 128 * 2;
  const std::int64_t late = tenant_in(l, Tenant::gradients, slot(1, Phase::backward));
  const std::int64_t end = tenant_in(l, Tenant::gradients, slot(1, Phase::end_of_backward));
  EXPECT_EQ(end - late, embedding_grad);
  const auto line = std::find_if(l.items.begin(), l.items.end(),
                                 [](const LedgerItem& i) { return i.id == "gradients.embedding"; });
  ASSERT_NE(line, l.items.end());
  EXPECT_EQ(line->bytes, embedding_grad);
  p.grad_accum = 2;
  const Ledger accumulating = estimate(m, p);
  EXPECT_EQ(tenant_in(accumulating, Tenant::gradients, slot(1, Phase::backward)),
            tenant_in(accumulating, Tenant::gradients, slot(1, Phase::end_of_backward)));
}

TEST(Phases, OptimizerStepScratchOnlyInTheStep) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.optimizer_impl = OptimizerImpl::foreach;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  for (const LedgerItem& i : l.items) {
    if (i.label.rfind("Optimizer step scratch", 0) != 0) continue;
    EXPECT_EQ(i.live, phase_bit(0, Phase::optimizer_step) | phase_bit(1, Phase::optimizer_step));
  }
}

TEST(Phases, OverheadIsItsOwnTenant) {
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), TrainingPlan{});
  EXPECT_EQ(totals(l).by_tenant[static_cast<std::size_t>(Tenant::overhead)], 64LL << 20);
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

std::int64_t item(const Ledger& l, const std::string& label) {
  for (const LedgerItem& i : l.items) {
    if (i.label == label) return i.bytes;
  }
  return -1;
}

// Qwen3-tiny linears: 4 x (16,384 + 2 x 8,192 + 16,384 + 3 x 49,152) + lm_head 1,048,576
// = 1,835,008 params; autocast keeps a bf16 copy of each (2 B). With checkpointing only the
// lm_head's copy outlives its layer.
TEST(Temporaries, AutocastWeightCopies) {
  TrainingPlan p;
  p.precision = Precision::autocast_bf16;
  p.batch = 2;
  p.seq = 128;
  EXPECT_EQ(item(estimate(testing_support::validation_model("qwen3-tiny"), p),
                 "Autocast bf16 copies of the fp32 weights"),
            3'670'016);
  p.checkpointing = Checkpointing::full;
  EXPECT_EQ(item(estimate(testing_support::validation_model("qwen3-tiny"), p),
                 "Autocast bf16 copies of the fp32 weights"),
            2'097'152);
  // A frozen lm_head that runs in pieces (litgpt's lm_head_chunk_size 128, seq 256: 2 pieces) is
  // cast again for the second piece, and both matmuls keep their copy: one more V x h x 2 B =
  // 8,192 x 128 x 2 = 2,097,152 B (a trained head is cast once: autocast caches it).
  TrainingPlan lora = p;
  lora.method = Method::lora;
  lora.checkpointing = Checkpointing::none;
  lora.seq = 256;
  TrainingPlan chunked = lora;
  chunked.behaviour.loss_chunk_positions = 128;
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  EXPECT_EQ(item(estimate(m, chunked), "Autocast bf16 copies of the fp32 weights") -
                item(estimate(m, lora), "Autocast bf16 copies of the fp32 weights"),
            2'097'152);
  TrainingPlan full = chunked;
  full.method = Method::full;
  TrainingPlan full_whole = full;
  full_whole.behaviour.loss_chunk_positions = 0;
  EXPECT_EQ(item(estimate(m, full), "Autocast bf16 copies of the fp32 weights"),
            item(estimate(m, full_whole), "Autocast bf16 copies of the fp32 weights"));
}

// Checkpointing keeps L x N x h x 2 B; the recomputed layer is one layer's saved set.
TEST(Temporaries, CheckpointedInputsAndRecompute) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 128;
  p.checkpointing = Checkpointing::full;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  EXPECT_EQ(item(l, "Checkpointed layer inputs (hidden states)"), 4 * 256 * 128 * 2);
  EXPECT_EQ(item(l, "Recomputed layer during its backward"), 256 * 7'088);
  EXPECT_EQ(item(l, "Backward transient inside one layer"), 2 * 256 * 384 * 2);
}

// QLoRA: the largest 4-bit weight (down/up/gate 384 x 128) dequantised to bf16 plus its absmax.
TEST(Temporaries, QloraDequantisedWeight) {
  TrainingPlan p;
  p.method = Method::qlora;
  const Ledger l = estimate(testing_support::validation_model("qwen3-tiny"), p);
  EXPECT_EQ(item(l, "QLoRA: dequantised copy of the largest 4-bit weight"),
            49'152 * 2 + 49'152 / 64 * 4);
}

// Under gradient checkpointing the model-level attention masks are arguments of every
// checkpointed layer and live through backward: Gemma 2 (eager, sliding and full layers
// alternating) two additive bf16 masks of B x L^2; Mistral (SDPA, window 4,096 < L) one bool
// L^2 mask broadcast over the batch; Llama under SDPA none (is_causal). Without checkpointing
// there is no such line.
TEST(Activations, CheckpointedLayersHoldTheAttentionMasks) {
  const std::string label = "Attention masks held by the checkpointed layers";
  TrainingPlan p = hf_trainer_defaults();
  p.method = Method::lora;
  p.precision = Precision::bf16;  // the hidden stream, and so the additive masks, in bf16
  p.checkpointing = Checkpointing::full;
  p.batch = 4;
  p.seq = 8192;
  const LoadedModel gemma = testing_support::load_or_fail("gemma-2-9b");
  EXPECT_EQ(item(estimate(gemma, p), label), 2LL * 4 * 8192 * 8192 * 2);
  const LoadedModel mistral = testing_support::load_or_fail("mistral-7b-v0.1");
  EXPECT_EQ(item(estimate(mistral, p), label), 8192LL * 8192);
  const LoadedModel llama = testing_support::load_or_fail("llama-3.1-8b");
  EXPECT_EQ(item(estimate(llama, p), label), -1);
  p.checkpointing = Checkpointing::none;
  EXPECT_EQ(item(estimate(gemma, p), label), -1);
}

// The printed arithmetic evaluates to the line's bytes: Mistral's saved layers past its window
// show the per-layer mask term; GPT-2 (learned positions) has no rotary tables in its formula.
TEST(Activations, FormulasShowEveryTerm) {
  TrainingPlan p = hf_trainer_defaults();
  p.seq = 8192;
  const Ledger mistral = estimate(testing_support::load_or_fail("mistral-7b-v0.1"), p);
  const Ledger gpt2 = estimate(testing_support::load_or_fail("gpt2"), TrainingPlan{});
  auto formula = [](const Ledger& l, const std::string& id) {
    for (const LedgerItem& i : l.items) {
      if (i.id == id) return i.formula;
    }
    return std::string("(no line)");
  };
  EXPECT_NE(formula(mistral, "activations.saved").find("8192^2 mask x 2 B"), std::string::npos)
      << formula(mistral, "activations.saved");
  EXPECT_EQ(formula(gpt2, "activations.inputs_rope").find("rotary"), std::string::npos)
      << formula(gpt2, "activations.inputs_rope");
}

}  // namespace
}  // namespace trainmem

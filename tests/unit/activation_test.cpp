// The per-layer activation model against hand-computed bytes per token (docs/method.md,
// activations section; research/accounting.md 2.6 and 7.2).
#include <gtest/gtest.h>

#include "ledger/activation_model.h"
#include "plan/method.h"
#include "support/models.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

std::vector<std::vector<ActivationTerm>> layers(const LoadedModel& m, const TrainingPlan& p) {
  const ParameterInventory inv = apply_method(m, p);
  std::vector<std::vector<ActivationTerm>> out;
  for (const LayerPlan& l : layer_plans(m.spec, inv, p)) {
    out.push_back(layer_terms(m.spec, l, activation_settings(p)));
  }
  return out;
}

// Llama-3.1-8B, full FT, bf16, SDPA: 16h + 4ad + 4kv d + 8I + 4a + 8 = 200,840 B/token/layer.
TEST(Activation, LlamaFullFineTuneSdpa) {
  const LoadedModel m = testing_support::load_or_fail("llama-3.1-8b");
  TrainingPlan p;
  const auto all = layers(m, p);
  ASSERT_EQ(all.size(), 32u);
  EXPECT_EQ(terms_per_token(all[0]), 200'840);
  EXPECT_EQ(terms_per_token(all[31]), 200'840);
  EXPECT_EQ(terms_per_score(all[0]), 0);
}

// Qwen3 adds per-head q/k norms: 6(a+kv)d + 4(a+kv). Tiny config h=128 a=4 kv=2 d=32 I=384:
// 2,048 + 512 + 256 + 3,072 + 16 + 8 + 1,152 + 24 = 7,088.
TEST(Activation, Qwen3QkNorm) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p;
  p.precision = Precision::bf16;
  const auto all = layers(m, p);
  EXPECT_EQ(terms_per_token(all[0]), 7'088);
}

// Eager: K and V repeated to all heads (+4(a-kv)d), no logsumexp (-4a), 6 B per score.
TEST(Activation, EagerScoresAndRepeatedKv) {
  const LoadedModel m = testing_support::load_or_fail("llama-3.1-8b");
  TrainingPlan p;
  p.attention = Attention::eager;
  const auto all = layers(m, p);
  EXPECT_EQ(terms_per_token(all[0]), 200'840 + 4 * (32 - 8) * 128 - 4 * 32);
  EXPECT_EQ(terms_per_score(all[0]), 6);
}

// LoRA r=16 on the seven projections, fp32 adapters on a bf16 base, no checkpointing. Layer 0:
// nothing upstream requires grad, so its input norm saves nothing. q/k/v: 3 x (4 x 128 + 4 x 16);
// q/k norm fp32 copies 528 + 264; SDPA q,k,v,out,lse 784; o 576; post norm 516; gate/up 2 x 576;
// MLP 3 x 768; down 4 x 384 + 64. Later layers add the input norm's 516.
TEST(Activation, LoraCastsEachAdaptedInput) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p;
  p.method = Method::lora;
  p.precision = Precision::bf16;
  const auto all = layers(m, p);
  EXPECT_EQ(terms_per_token(all[0]), 9'452);
  EXPECT_EQ(terms_per_token(all[1]), 9'968);
}

// With dropout > 0 each adapted input also keeps a bool mask (1 B per input element).
TEST(Activation, LoraDropoutAddsMasks) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p;
  p.method = Method::lora;
  p.precision = Precision::bf16;
  p.lora.dropout = 0.05;
  const auto all = layers(m, p);
  // masks: q,k,v 3 x 128, o 128, gate/up 2 x 128, down 384.
  EXPECT_EQ(terms_per_token(all[1]), 9'968 + 3 * 128 + 128 + 2 * 128 + 384);
}

// Freezing the first layers: nothing upstream requires grad, so they save nothing.
TEST(Activation, FrozenPrefixSavesNothing) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p;
  p.method = Method::freeze;
  p.precision = Precision::bf16;
  p.freeze.train_modules = {"q", "k", "v", "o", "gate", "up", "down", "norm"};
  p.freeze.train_layers = {2, 3};
  const auto all = layers(m, p);
  EXPECT_EQ(terms_per_token(all[0]), 0);
  EXPECT_EQ(terms_per_token(all[1]), 0);
  EXPECT_EQ(terms_per_token(all[2]), 7'088 - 516);  // its input does not require grad
  EXPECT_EQ(terms_per_token(all[3]), 7'088);
}

// Korthikanti et al.: s b h (34 + 5 a s / h).
TEST(Activation, KorthikantiReference) {
  const LoadedModel m = testing_support::load_or_fail("llama-3.1-8b");
  EXPECT_EQ(korthikanti_layer_bytes(m.spec, 1, 1024), 1024LL * 4096 * 34 + 5LL * 32 * 1024 * 1024);
}

// MoE (Qwen3-30B-A3B): norms 12h + 8 and the q/k/v input 2h; router fp32 softmax 4E + 12k, per
// routed copy the gathered input, the expert's 8 I_moe and its output.
TEST(Activation, MoeRoutedCopies) {
  const LoadedModel m = testing_support::load_or_fail("qwen3-30b-a3b");
  TrainingPlan p;
  const auto all = layers(m, p);
  const std::int64_t h = 2048, a = 32, kv = 4, d = 128, e = 128, k = 8, im = 768;
  const std::int64_t attn =
      14 * h + 8 + 2 * a * d + 4 * kv * d + 2 * a * d + 4 * a + 6 * (a + kv) * d + 4 * (a + kv);
  const std::int64_t moe = 2 * h + 4 * e + 12 * k + k * (2 * h + 8 * im + 2 * h);
  EXPECT_EQ(terms_per_token(all[0]), attn + moe);
}

std::int64_t bytes_of(const std::vector<ActivationTerm>& terms, const std::string& prefix) {
  std::int64_t sum = 0;
  for (const ActivationTerm& t : terms) {
    if (t.name.rfind(prefix, 0) == 0) sum += t.bytes_per_token;
  }
  return sum;
}

// Qwen3-MoE tiny (h 128, k 2 of 8 experts, I_moe 64), full FT. transformers 5's fused experts run
// grouped_mm, which autocast does not cast (integrations/moe.py _grouped_mm casts the input to
// the weights' dtype): under autocast they run in fp32, so per routed copy the gathered input 4h,
// the gate's silu input, act(gate), up and the down input 4 x 4 I_moe, and the output 4h:
// 2 x (512 + 1,024 + 512) = 4,096 B/token; in pure bf16 half that.
TEST(Activation, FusedExpertsRunInTheirWeightsDtypeUnderAutocast) {
  const LoadedModel m = testing_support::validation_model("qwen3moe-tiny");
  TrainingPlan p;
  p.precision = Precision::autocast_bf16;
  EXPECT_EQ(bytes_of(layers(m, p)[1], "experts:"), 4'096);
  p.precision = Precision::bf16;
  EXPECT_EQ(bytes_of(layers(m, p)[1], "experts:"), 2'048);
}

// Qwen2-MoE tiny (h 128) under autocast, full FT: four trainable linears read the post-attention
// norm's fp32 output, each through its own bf16 copy: the router, the shared expert's gate and
// up, and the shared_expert_gate: 4 x 2 x 128 = 1,024 B/token (measured: holdout draws).
TEST(Activation, SharedExpertGateReadsTheInputToo) {
  const LoadedModel m = testing_support::validation_model("qwen2_moe-tiny");
  TrainingPlan p;
  p.precision = Precision::autocast_bf16;
  EXPECT_EQ(bytes_of(layers(m, p)[1], "router and shared-expert input"), 1'024);
}

// DeepSeek-V3 tiny (h 128, q_lora_rank 64, kv_lora_rank 32), full FT. The router's
// x.type(torch.float32) copies only a 16-bit stream (4h = 512 B/token in bf16, none under
// autocast, whose stream is fp32 already); the latent norms read the projections' bf16 outputs,
// so under autocast their normalized tensors are bf16: 2 x 64 and 2 x 32.
TEST(Activation, MlaLatentNormsAndRouterUnderAutocast) {
  const LoadedModel m = testing_support::validation_model("deepseek_v3-tiny");
  TrainingPlan p;
  p.precision = Precision::bf16;
  EXPECT_EQ(bytes_of(layers(m, p)[1], "router: fp32 copy"), 512);
  p.precision = Precision::autocast_bf16;
  const auto moe_layer = layers(m, p)[1];
  EXPECT_EQ(bytes_of(moe_layer, "router: fp32 copy"), 0);
  EXPECT_EQ(bytes_of(moe_layer, "q_a_layernorm: normalized"), 128);
  EXPECT_EQ(bytes_of(moe_layer, "kv_a_layernorm: normalized"), 64);
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

// GPT-2 (h 768, 12 heads, I 3,072, resid_pdrop 0.1), full FT, SDPA: LayerNorms 2 x (2h + 8),
// c_attn input 2h, q/k/v/out 4 x 2h, lse 4a, residual dropout masks 2 x h, c_fc input 2h,
// NewGELUActivation 4 x 2I, c_proj input 2I.
TEST(Activation, Gpt2LayerNormGeluDropout) {
  const LoadedModel m = testing_support::load_or_fail("gpt2");
  TrainingPlan p;
  const auto all = layers(m, p);
  const std::int64_t h = 768, i = 3072;
  EXPECT_EQ(terms_per_token(all[1]),
            2 * (2 * h + 8) + 2 * h + 8 * h + 48 + 2 * h + 2 * h + 8 * i + 2 * i);
}

// Padding mask with SDPA: K and V repeated to all heads and a float mask per b x s x s.
TEST(Activation, PaddingMaskRepeatsKv) {
  const LoadedModel m = testing_support::load_or_fail("llama-3.1-8b");
  TrainingPlan p;
  ActivationSettings cfg = activation_settings(p);
  cfg.padding_mask = true;
  const auto plans = layer_plans(m.spec, apply_method(m, p), p);
  const auto terms = layer_terms(m.spec, plans[1], cfg);
  EXPECT_EQ(terms_per_token(terms), 200'840 + 4 * (32 - 8) * 128);
  EXPECT_EQ(terms_bytes(terms, m.spec, 1, 1024) - terms_per_token(terms) * 1024, 2LL * 1024 * 1024);
}

// torch.compile'd layers (FrameworkBehaviour::compiled_layers; probed on CPU,
// validation/data/compile-layer-probe-torch2.5.1.json). llama-tiny: h=128 a=4 kv=2 d=32 I=352,
// bf16. Full FT, a layer whose input requires grad: eager 16h + 4ad + 4kv d + 8I + 4a + 8 = 5,656.
// Compiled: each RMSNorm keeps its bf16 input and rstd (2h + 4, not 4h + 4 + 2h), the MLP the gate
// and up outputs and the down_proj input (6I, not 8I); linear inputs and attention unchanged:
// 2 x 260 + 2 x 256 (q/k/v and gate/up inputs) + 784 (q 256, k 128, v 128, out 256, lse 16)
// + 3 x 704 = 3,928.
TEST(Activation, CompiledLayerKeepsNormInputsAndMatmulOutputs) {
  const LoadedModel m = testing_support::validation_model("llama-tiny");
  TrainingPlan p;
  p.precision = Precision::bf16;
  EXPECT_EQ(terms_per_token(layers(m, p)[1]), 5'656);
  p.behaviour.compiled_layers = true;
  const auto all = layers(m, p);
  EXPECT_EQ(terms_per_token(all[1]), 3'928);
  EXPECT_EQ(terms_per_score(all[1]), 0);
}

// LoRA r=8 on q,v with bf16 adapters (torchtune), layer 1. Eager: input norm 4h + 4 = 516 (its
// weight is frozen: no normalized copy), q/v LoRA A input 256 + A outputs 2 x 16, attention 784,
// post norm 516, MLP silu input, act(gate), up 3 x 704 (down is frozen): 4,216. Compiled: norms
// 2h + 4 = 260 each, MLP gate and up 2 x 704: 260 + 256 + 32 + 784 + 260 + 1,408 = 3,000.
TEST(Activation, CompiledLayerLoraQv) {
  const LoadedModel m = testing_support::validation_model("llama-tiny");
  TrainingPlan p;
  p.method = Method::lora;
  p.precision = Precision::bf16;
  p.lora.rank = 8;
  p.lora.targets = {"q", "v"};
  p.behaviour.adapters_fp32 = false;
  EXPECT_EQ(terms_per_token(layers(m, p)[1]), 4'216);
  p.behaviour.compiled_layers = true;
  EXPECT_EQ(terms_per_token(layers(m, p)[1]), 3'000);
}

// LoRA r=8 on all seven linears with fp32 adapters (PEFT) on a bf16 base, layer 1. Eager casts
// the input once per adapter: 516 + 3 x 512 + 96 + 784 + (512 + 32) + 516 + 2 x 512 + 64
// + 3 x 704 + (1,408 + 32) = 8,632. Compiled keeps one cast per input: 260 + 512 + 96 + 784
// + 544 + 260 + 512 + 64 + 2 x 704 + 1,440 = 5,880.
TEST(Activation, CompiledLayerSharesTheLoraCast) {
  const LoadedModel m = testing_support::validation_model("llama-tiny");
  TrainingPlan p;
  p.method = Method::lora;
  p.precision = Precision::bf16;
  p.lora.rank = 8;
  EXPECT_EQ(terms_per_token(layers(m, p)[1]), 8'632);
  p.behaviour.compiled_layers = true;
  EXPECT_EQ(terms_per_token(layers(m, p)[1]), 5'880);
}

// Autocast and Gemma-style fp32-weight norms were not probed: compiled_layers leaves them eager.
TEST(Activation, CompiledLayerLeavesUnprobedCasesEager) {
  const LoadedModel m = testing_support::validation_model("llama-tiny");
  TrainingPlan p;
  p.precision = Precision::autocast_bf16;
  const std::int64_t eager = terms_per_token(layers(m, p)[1]);
  p.behaviour.compiled_layers = true;
  EXPECT_EQ(terms_per_token(layers(m, p)[1]), eager);
}

}  // namespace
}  // namespace trainmem

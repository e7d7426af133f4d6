// The run phases beyond the training step (src/ledger/run_phases.h): the formulas by hand, and
// where the profiles put their lines, on qwen3-tiny (V 8,192; hidden 128; 4 layers; 4 heads of
// 32, 2 KV heads; MLP 384).
#include "ledger/run_phases.h"

#include <gtest/gtest.h>

#include "gpu/alloc_events.h"
#include "plan/framework.h"
#include "support/models.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

TrainingPlan plan_for(const std::string& framework, Method method = Method::lora,
                      std::int64_t batch = 2, std::int64_t seq = 256) {
  TrainingPlan p;
  p.method = method;
  p.precision = Precision::bf16;
  p.batch = batch;
  p.seq = seq;
  EXPECT_FALSE(parse_framework(framework, p.framework, p.library_versions).has_value());
  apply_framework(p);
  return p;
}

std::int64_t bytes_with_prefix(const Ledger& l, const std::string& prefix, PhaseMask* live) {
  std::int64_t n = 0;
  for (const LedgerItem& i : l.items) {
    if (i.id.rfind(prefix, 0) == 0) {
      n += i.bytes;
      if (live != nullptr) *live |= i.live;
    }
  }
  return n;
}

TEST(RunPhases, EvalLossChainByHand) {
  // batch 2, seq 5, vocab 10, bf16 logits, bf16 loss: output 2x5x10x2 = 200; the [..., :-1, :]
  // slice is 2x4x10 = 80 elements: its reshape copy 160 and log_softmax 160.
  const ledger::EvalLossChain c = ledger::eval_loss_chain(2, 5, 10, 2, false);
  EXPECT_EQ(c.output_bytes, 200);
  EXPECT_EQ(c.shift_copy_bytes, 160);
  EXPECT_EQ(c.upcast_bytes, 0);
  EXPECT_EQ(c.log_softmax_bytes, 160);
  EXPECT_EQ(c.total(), 520);
  // Batch 1: the slice of a (1, T, V) tensor is contiguous, reshape is a view.
  const ledger::EvalLossChain one = ledger::eval_loss_chain(1, 5, 10, 2, false);
  EXPECT_EQ(one.shift_copy_bytes, 0);
  EXPECT_EQ(one.total(), 100 + 80);
  // An upcasting loss: 80 x 4 for the fp32 copy and 80 x 4 for log_softmax.
  const ledger::EvalLossChain up = ledger::eval_loss_chain(2, 5, 10, 2, true);
  EXPECT_EQ(up.upcast_bytes, 320);
  EXPECT_EQ(up.log_softmax_bytes, 320);
}

TEST(RunPhases, GenerationCacheByHand) {
  // litgpt caches n_head heads (not the KV groups): 2 x 2 layers x 4 heads x 16 x 8 x 2 B.
  const ledger::GenerationCache g = ledger::generation_cache(2, 4, 2, 8, 16, 2);
  EXPECT_EQ(g.kv_bytes, 4096);
  EXPECT_EQ(g.mask_bytes, 256);
  // Multi-query attention: one head.
  EXPECT_EQ(ledger::generation_cache(2, 4, 1, 8, 16, 2).kv_bytes, 1024);
}

TEST(RunPhases, LoadTransientByHand) {
  using ledger::load_transient;
  EXPECT_EQ(load_transient(LoadQuantiser::none, 1000).total(), 0);
  // bf16 weight + fp16 copy.
  EXPECT_EQ(load_transient(LoadQuantiser::lightning_bnb, 1000).total(), 4000);
  // bf16 weight + scaled blocks + 2 x (1,000 x 16) bf16 distances = 2,000 + 2,000 + 64,000.
  EXPECT_EQ(load_transient(LoadQuantiser::torchao_unchunked, 1000).total(), 68000);
  // 3 chunks of 1,048,576: 2n + 2n + n indices + 2 x 1,048,576 x 16 x 2 distances.
  const std::int64_t n = 3 * 1048576;
  const ledger::LoadTransient c = load_transient(LoadQuantiser::torchao_chunked, n);
  EXPECT_EQ(c.distance_bytes, 67108864);
  EXPECT_EQ(c.total(), 5 * n + 67108864);
  // Past 64 chunks the two nibble tensors (n / 2 each) outweigh one chunk's distances.
  EXPECT_EQ(load_transient(LoadQuantiser::torchao_chunked, 128 * 1048576).distance_bytes,
            128 * 1048576);
}

TEST(RunPhases, LitgptValidatesBetweenStepsHfDoesNot) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  const Ledger lit = estimate(m, plan_for("litgpt"));
  PhaseMask live = 0;
  // 2 x 256 x 8,192 x 4 B output + 2 x 255 x 8,192 x 4 B shift copy and log_softmax: fp32, as
  // Fabric's bf16-true casts the model output to fp32 (HalfPrecision.convert_output).
  EXPECT_EQ(bytes_with_prefix(lit, "logits.eval_", &live),
            2 * 256 * 8192 * 4 + 2 * (2 * 255 * 8192 * 4));
  EXPECT_EQ(live, phase_bit(1, Phase::loaded)) << "between steps, after zero_grad";
  // The generation after it (2 x 4 layers x 4 heads x 256 x 32 x 2 B + 256 x 256) is smaller.
  EXPECT_EQ(bytes_with_prefix(lit, "temporaries.generation_", nullptr), 0);
  EXPECT_EQ(run_phase_at(lit, 7), "the validation pass between steps");
  EXPECT_EQ(run_phase_at(lit, 8), "");

  const Ledger hf = estimate(m, plan_for("hf"));
  EXPECT_EQ(bytes_with_prefix(hf, "logits.eval_", nullptr), 0);
  EXPECT_EQ(bytes_with_prefix(hf, "temporaries.load_", nullptr), 0);
  for (int s = 0; s < kPhaseSlots; ++s) EXPECT_EQ(run_phase_at(hf, s), "");
}

TEST(RunPhases, GenerationLineWhenItHoldsMore) {
  // A plan that generates without validating: the KV cache of batch 1 at the training length,
  // 2 x 4 layers x 4 heads x 256 x 32 x 2 B = 524,288, and the 256 x 256 bool mask.
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("hf");
  p.behaviour.generates_sample = true;
  const Ledger l = estimate(m, p);
  PhaseMask live = 0;
  EXPECT_EQ(bytes_with_prefix(l, "temporaries.generation_", &live), 524288 + 65536);
  EXPECT_EQ(live, phase_bit(1, Phase::loaded));
  EXPECT_EQ(bytes_with_prefix(l, "logits.eval_", nullptr), 0);
  EXPECT_EQ(run_phase_at(l, 7), "the sample generation between steps");
}

TEST(RunPhases, QloraLoadTransientPerProfile) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  // The largest quantised base weight: the MLP's 384 x 128 = 49,152 elements.
  const std::int64_t n = 384 * 128;
  PhaseMask live = 0;
  TrainingPlan old = plan_for("torchtune@0.1", Method::qlora);
  EXPECT_EQ(bytes_with_prefix(estimate(m, old), "temporaries.load_", &live), 68 * n);
  EXPECT_EQ(live, phase_bit(0, Phase::loaded)) << "before the first forward";
  // torchao >= 0.2 (current torchtune): 5n + one chunk's distances (the whole tensor here).
  EXPECT_EQ(bytes_with_prefix(estimate(m, plan_for("torchtune", Method::qlora)),
                              "temporaries.load_", nullptr),
            5 * n + 64 * n);
  // litgpt quantises the lm_head too (quantises_lm_head), so its largest 4-bit weight is the
  // 8,192 x 128 lm_head: the bf16 weight and its fp16 copy, 4 B per element.
  EXPECT_EQ(bytes_with_prefix(estimate(m, plan_for("litgpt", Method::qlora)), "temporaries.load_",
                              nullptr),
            4 * 8192 * 128);
  EXPECT_EQ(
      bytes_with_prefix(estimate(m, plan_for("hf", Method::qlora)), "temporaries.load_", nullptr),
      0);
  EXPECT_EQ(bytes_with_prefix(estimate(m, plan_for("torchtune@0.1", Method::lora)),
                              "temporaries.load_", nullptr),
            0)
      << "nothing is quantised";
  EXPECT_EQ(run_phase_at(estimate(m, old), 0), "loading: quantising the base weights");
  // Llama-2-7B as in torchtune's QLoRA tutorial (batch 2 x 512, checkpointing): the MLP weight's
  // transient, 68 x 11,008 x 4,096 = 3,066,036,224 B on top of the weights, is the largest moment
  // of the run, for the ledger and for the replay.
  const LoadedModel big = testing_support::validation_model("published/llama-2-7b");
  TrainingPlan tut = plan_for("torchtune@0.1", Method::qlora, 2, 512);
  tut.checkpointing = Checkpointing::full;
  const Ledger l = estimate(big, tut);
  EXPECT_EQ(bytes_with_prefix(l, "temporaries.load_", nullptr), 3066036224);
  EXPECT_EQ(totals(l).peak_slot, 0);
  const auto g = gpu_estimate(big, tut, l, GpuOptions{});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->peak_allocated_slot, 0);
  EXPECT_EQ(g->peak_allocated_run_phase, "loading: quantising the base weights");
}

TEST(RunPhases, LoadReplayedOneWeightAtATime) {
  // torchtune 0.1 QLoRA: every quantised weight's transients (68 B per element) are allocated
  // and freed in turn after the weights; the high water of requested bytes in the load slot is
  // the ledger's (weights + the largest weight's set), and each weight's set appears once.
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  const TrainingPlan p = plan_for("torchtune@0.1", Method::qlora);
  const Ledger l = estimate(m, p);
  const gpu::EventStream s = gpu::alloc_events(m, p, l);
  EXPECT_EQ(gpu::requested_high_water(s)[0], totals(l).by_slot[0]);
  // qwen3-tiny quantises q, k, v, o, gate, up, down in 4 layers: 28 weights, 4 or 5 allocations
  // each (the distances as one run of two tensors); the MLP's 49,152 elements: 32 x 49,152 B.
  int distance_runs = 0;
  for (const gpu::AllocEvent& e : s.events) {
    if (e.op == gpu::Op::alloc && e.phase == 0 && e.count == 2 && e.bytes == 32 * 49152) {
      ++distance_runs;
    }
  }
  EXPECT_EQ(distance_runs, 3 * 4) << "gate, up and down in each of the 4 layers";
}

TEST(RunPhases, ReplayedAndNamedAtThePeak) {
  // LoRA with full checkpointing on a long sequence: the step holds one checkpointed input per
  // layer, while the validation pass holds three b x s x V tensors next to the loop's kept
  // logits; the replay and the ledger both put the peak between steps.
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("litgpt", Method::lora, 8, 2048);
  p.checkpointing = Checkpointing::full;
  const Ledger l = estimate(m, p);
  const Totals t = totals(l);
  EXPECT_EQ(t.peak_slot, kPhaseCount + static_cast<int>(Phase::loaded));
  EXPECT_EQ(run_phase_at(l, t.peak_slot), "the validation pass between steps");
  GpuOptions o;
  const auto g = gpu_estimate(m, p, l, o);
  ASSERT_TRUE(g.ok());
  // The allocated peak; the reserved one is where the cache last grew, which the step's
  // packing decides (its segments can hold the pass).
  EXPECT_EQ(g->peak_allocated_run_phase, "the validation pass between steps");
  EXPECT_GE(g->peak_reserved_bytes, g->peak_allocated_bytes);
  const GpuPhase& between = g->phases[static_cast<std::size_t>(t.peak_slot)];
  EXPECT_EQ(between.allocated_bytes, g->peak_allocated_bytes);
  // Without the validation lines the steady `loaded` slot holds less by at least their bytes.
  std::int64_t eval = 0;
  for (const LedgerItem& i : l.items) {
    if (i.id.rfind("logits.eval_", 0) == 0) eval += i.bytes;
  }
  EXPECT_GE(between.allocated_bytes, eval);
}

TEST(RunPhases, TrainerEvalLossByHand) {
  // batch 2, seq 5, vocab 10, hidden 4, fp32 stream, bf16 logits, upcasting loss (HF current):
  // hidden 2x5x4x4 = 160; logits 2x5x10 = 100 elements: output 200, fp32 upcast 400,
  // log_softmax 400 (labels padded, so all 5 positions).
  const ledger::TrainerEvalLoss l = ledger::trainer_eval_loss(2, 5, 10, 4, 4, 2, true, false);
  EXPECT_EQ(l.hidden_bytes, 160);
  EXPECT_EQ(l.output_bytes, 200);
  EXPECT_EQ(l.shift_copy_bytes, 0);
  EXPECT_EQ(l.upcast_bytes, 400);
  EXPECT_EQ(l.log_softmax_bytes, 400);
  EXPECT_EQ(l.total(), 1160);
  // transformers 4.47-4.48: the shifted fp32 copy as well (100 x 4).
  EXPECT_EQ(ledger::trainer_eval_loss(2, 5, 10, 4, 4, 2, true, true).total(), 1560);
  // transformers < 4.46: fp32 logits from the model, no separate upcast: 160 + 400 + 400.
  const ledger::TrainerEvalLoss old = ledger::trainer_eval_loss(2, 5, 10, 4, 4, 4, true, false);
  EXPECT_EQ(old.upcast_bytes, 0);
  EXPECT_EQ(old.total(), 960);
  // A loss on the compute dtype: 160 + 200 + 200.
  EXPECT_EQ(ledger::trainer_eval_loss(2, 5, 10, 4, 4, 2, false, false).total(), 560);
}

TEST(RunPhases, EvalLayerTransientByHand) {
  // batch 2, seq 5 (10 tokens), hidden 4, width 12, 8 heads, bf16 stream and compute, no
  // adapters: embedding output, layer input, residual, normed input 4x10x4x2 = 320; gated MLP
  // 3x10x12x2 = 720; plain 2x10x12x2 = 480.
  ledger::EvalLayerShape shape{.batch = 2,
                               .seq = 5,
                               .hidden = 4,
                               .mlp_width = 12,
                               .heads = 8,
                               .gated_mlp = true,
                               .stream_bytes = 2,
                               .compute_bytes = 2,
                               .adapter_bytes = 4,
                               .adapter_input_cast = true};
  const ledger::EvalLayerTransient t = ledger::eval_layer_transient(shape);
  EXPECT_EQ(t.stream_bytes, 320);
  EXPECT_EQ(t.adapter_input_bytes, 0);
  EXPECT_EQ(t.mlp_bytes, 720);
  EXPECT_EQ(t.scores_bytes, 0);
  EXPECT_EQ(t.total(), 1040);
  ledger::EvalLayerShape plain = shape;
  plain.gated_mlp = false;
  EXPECT_EQ(ledger::eval_layer_transient(plain).total(), 800);
  // One layer: its input is the embedding output, 3 stream tensors.
  ledger::EvalLayerShape one = shape;
  one.layers = 1;
  EXPECT_EQ(ledger::eval_layer_transient(one).stream_bytes, 240);
  // fp32 LoRA on up_proj: act_fn(gate) 2 + base up 2 + lora_B output 4 + scaled 4 = 12 B per
  // element: 10 x 12 x 12 = 1,440, and the normed input cast to fp32, 10 x 4 x 4 = 160.
  ledger::EvalLayerShape up = shape;
  up.up_adapted = true;
  EXPECT_EQ(ledger::eval_mlp_bytes_per_element(up), 12);
  const ledger::EvalLayerTransient u = ledger::eval_layer_transient(up);
  EXPECT_EQ(u.adapter_input_bytes, 160);
  EXPECT_EQ(u.mlp_bytes, 1440);
  EXPECT_EQ(u.total(), 320 + 160 + 1440);
  // Only gate_proj adapted: base 2 + 2 x 4 = 10 B per element.
  ledger::EvalLayerShape gate = shape;
  gate.gate_adapted = true;
  EXPECT_EQ(ledger::eval_mlp_bytes_per_element(gate), 10);
  // Adapters in the model dtype: 2 + 2 + 2 + 2 = 8 > 6, and no input cast.
  up.adapter_bytes = 2;
  up.adapter_input_cast = false;
  EXPECT_EQ(ledger::eval_mlp_bytes_per_element(up), 8);
  EXPECT_EQ(ledger::eval_layer_transient(up).adapter_input_bytes, 0);
  // Eager attention: 8 B x 2 x 8 heads x 5 x 5 = 3,200 outweighs the plain MLP.
  ledger::EvalLayerShape eager = shape;
  eager.eager_scores = true;
  const ledger::EvalLayerTransient e = ledger::eval_layer_transient(eager);
  EXPECT_EQ(e.scores_bytes, 3200);
  EXPECT_EQ(e.total(), 3520);
}

TEST(RunPhases, TrainerEvaluationOnlyWhenAsked) {
  // qwen3-tiny (V 8,192, hidden 128, MLP 384), bf16 plan: eval batch 8 x 256 tokens.
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("hf");
  EXPECT_EQ(bytes_with_prefix(estimate(m, p), "logits.trainer_eval_", nullptr), 0)
      << "eval_strategy no (the default) prices no evaluation";
  p.eval_strategy = EvalStrategy::steps;
  const Ledger l = estimate(m, p);
  PhaseMask live = 0;
  // 8 x 256 = 2,048 tokens: hidden 2,048 x 128 x 2 + logits 2,048 x 8,192 x (2 + 4 + 4).
  const std::int64_t tokens = 8 * 256;
  EXPECT_EQ(bytes_with_prefix(l, "logits.trainer_eval_", &live),
            tokens * 128 * 2 + tokens * 8192 * 10);
  EXPECT_EQ(live, phase_bit(1, Phase::loaded)) << "after optimizer.step() and zero_grad()";
  EXPECT_EQ(run_phase_at(l, kPhaseCount + static_cast<int>(Phase::loaded)),
            "the evaluation between steps (Trainer.evaluate)");
  // The eval batch, not the training batch, sizes it.
  p.eval_batch = 1;
  EXPECT_EQ(bytes_with_prefix(estimate(m, p), "logits.trainer_eval_", nullptr),
            256 * 128 * 2 + 256 * 8192 * 10);
  // epoch prices the same pass as steps.
  p.eval_strategy = EvalStrategy::epoch;
  EXPECT_EQ(bytes_with_prefix(estimate(m, p), "logits.trainer_eval_", nullptr),
            256 * 128 * 2 + 256 * 8192 * 10);
  // Liger's fused loss returns no logits in evaluation: the layer's working set is the pass,
  // here at up_proj's fp32 LoRA branch (LoRA on every projection): 4 hidden-wide stream
  // tensors, the input cast to fp32, and 2 + 2 + 4 + 4 B per element of the 384-wide MLP.
  p.loss = Loss::fused;
  const Ledger fused = estimate(m, p);
  EXPECT_EQ(bytes_with_prefix(fused, "logits.trainer_eval_", nullptr), 0);
  EXPECT_EQ(bytes_with_prefix(fused, "temporaries.trainer_eval_", nullptr),
            4 * 256 * 128 * 2 + 256 * 128 * 4 + 12 * 256 * 384);
}

TEST(RunPhases, TrainerEvaluationBuildsTheKvCacheBeforeTransformers5) {
  // The Trainer before transformers 5 leaves the config's use_cache, and the evaluation forward
  // is not training, so even a checkpointed plan's evaluation builds the cache: qwen3-tiny's 4
  // layers x eval batch 8 x 256 tokens x (k, v) x 2 kv heads x 32 x 2 B.
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("hf@4.57");
  p.checkpointing = Checkpointing::full;
  p.eval_strategy = EvalStrategy::steps;
  PhaseMask live = 0;
  EXPECT_EQ(bytes_with_prefix(estimate(m, p), "activations.trainer_eval_kv_cache", &live),
            4 * 8 * 256 * (2 * 2 * 32 * 2));
  EXPECT_EQ(live, phase_bit(1, Phase::loaded));
  // transformers 5 sets use_cache from TrainingArguments.use_cache, default False.
  TrainingPlan v5 = plan_for("hf@5.0");
  v5.eval_strategy = EvalStrategy::steps;
  const Ledger l5 = estimate(m, v5);
  EXPECT_GT(bytes_with_prefix(l5, "logits.trainer_eval_", nullptr), 0);
  EXPECT_EQ(bytes_with_prefix(l5, "activations.trainer_eval_kv_cache", nullptr), 0);
}

TEST(RunPhases, TrainerEvaluationSetsThePeakOfASmallBatchRun) {
  // Batch 1 LoRA with checkpointing, eval batch 8 left at HF's default: the evaluation's
  // 8 x 2,048 x 8,192 x 10 B chain is above the step; the ledger and the replay agree.
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("hf", Method::lora, 1, 2048);
  p.checkpointing = Checkpointing::full;
  p.eval_strategy = EvalStrategy::steps;
  const Ledger l = estimate(m, p);
  const Totals t = totals(l);
  EXPECT_EQ(t.peak_slot, kPhaseCount + static_cast<int>(Phase::loaded));
  const auto g = gpu_estimate(m, p, l, GpuOptions{});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->peak_allocated_run_phase, "the evaluation between steps (Trainer.evaluate)");
}

}  // namespace
}  // namespace trainmem

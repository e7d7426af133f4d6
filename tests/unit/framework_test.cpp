// Framework profiles: the name/version parsers, the table's knobs per profile and version, and
// each knob's effect on the ledger, by hand on qwen3-tiny (V 8,192; hidden 128; 4 layers).
#include "plan/framework.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "plan/framework_layers.h"
#include "plan/method.h"
#include "support/models.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

TrainingPlan plan_for(const std::string& framework, Method method = Method::full,
                      const std::string& versions = "") {
  TrainingPlan p;
  p.method = method;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 256;
  EXPECT_FALSE(parse_framework(framework, p.framework, p.library_versions).has_value());
  EXPECT_FALSE(parse_library_versions(versions, p.library_versions).has_value());
  apply_framework(p);
  return p;
}

std::int64_t tenant_in(const Ledger& l, Tenant t, int step, Phase p) {
  std::int64_t n = 0;
  for (const LedgerItem& i : l.items) {
    if (i.tenant == t && (i.live & phase_bit(step, p))) n += i.bytes;
  }
  return n;
}

constexpr std::int64_t kNV = 2 * 256 * 8192;  // b2 x s256 tokens x V 8,192
constexpr std::int64_t kIntermediate = 384;   // qwen3-tiny intermediate_size

TEST(FrameworkParse, NamesVersionsAndErrors) {
  std::string name;
  std::vector<std::pair<std::string, std::string>> v;
  EXPECT_FALSE(parse_framework("litgpt", name, v).has_value());
  EXPECT_EQ(name, "litgpt");
  EXPECT_TRUE(v.empty());
  EXPECT_FALSE(parse_framework("hf@4.43", name, v).has_value());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].first, "transformers");
  EXPECT_EQ(v[0].second, "4.43");
  const auto typo = parse_framework("litgtp", name, v);
  ASSERT_TRUE(typo.has_value());
  EXPECT_EQ(typo->field, "--framework");
  EXPECT_NE(typo->reason.find("did you mean 'litgpt'"), std::string::npos) << typo->reason;
  const auto engine = parse_framework("deepspeed", name, v);
  ASSERT_TRUE(engine.has_value());
  EXPECT_NE(engine->reason.find("a layout across GPUs: --engine deepspeed"), std::string::npos)
      << engine->reason;
  const auto not_engine = parse_framework("jax", name, v);
  ASSERT_TRUE(not_engine.has_value());
  EXPECT_EQ(not_engine->reason.find("--engine"), std::string::npos) << not_engine->reason;
  EXPECT_TRUE(parse_framework("hf@four", name, v).has_value());
  EXPECT_TRUE(parse_framework("hf@", name, v).has_value());
  EXPECT_FALSE(parse_library_versions("bitsandbytes=0.41.1, peft=0.10", v).has_value());
  EXPECT_EQ(v.back().first, "peft");
  // A library given again replaces its version (the last wins): one entry per library.
  EXPECT_FALSE(parse_library_versions("peft=0.12,bitsandbytes=0.44", v).has_value());
  EXPECT_EQ(std::count_if(v.begin(), v.end(), [](const auto& e) { return e.first == "peft"; }), 1);
  EXPECT_EQ(
      std::find_if(v.begin(), v.end(), [](const auto& e) { return e.first == "bitsandbytes"; })
          ->second,
      "0.44");
  EXPECT_FALSE(parse_framework("hf@4.50", name, v).has_value());
  EXPECT_EQ(
      std::count_if(v.begin(), v.end(), [](const auto& e) { return e.first == "transformers"; }),
      1);
  const auto lib = parse_library_versions("bnb=0.41", v);
  ASSERT_TRUE(lib.has_value());
  EXPECT_EQ(lib->field, "--versions");
  EXPECT_TRUE(parse_library_versions("peft", v).has_value());
  // cuda: the runtime of the torch build (the CUDA context's size); no torch ships CUDA 8.
  EXPECT_FALSE(parse_library_versions("cuda=13.0", v).has_value());
  const auto old_cuda = parse_library_versions("cuda=8.0", v);
  ASSERT_TRUE(old_cuda.has_value());
  EXPECT_NE(old_cuda->reason.find("cuda=8.0"), std::string::npos) << old_cuda->reason;
}

TEST(FrameworkParse, CompareVersions) {
  EXPECT_LT(compare_versions("4.43", "4.46"), 0);
  EXPECT_LT(compare_versions("4.9", "4.10"), 0);
  EXPECT_EQ(compare_versions("0.44", "0.44.0"), 0);
  EXPECT_GT(compare_versions("0.49.2", "0.44"), 0);
}

TEST(FrameworkTable, EachProfileSetsItsKnobs) {
  EXPECT_TRUE(applied_differences(plan_for("hf")).empty());
  EXPECT_TRUE(applied_differences(plan_for("axolotl")).empty());  // HF with its options
  const FrameworkBehaviour lit = plan_for("litgpt").behaviour;
  EXPECT_TRUE(lit.outputs_kept);
  EXPECT_FALSE(lit.loss_upcast);
  EXPECT_EQ(lit.loss_chunk_positions, 128);
  EXPECT_FALSE(lit.adapters_fp32);
  EXPECT_TRUE(lit.fp32_logits_in_model);
  EXPECT_TRUE(lit.unties_embeddings);
  EXPECT_FALSE(plan_for("hf").behaviour.unties_embeddings);
  EXPECT_FALSE(lit.model_dropout);
  EXPECT_TRUE(lit.fused_gelu);
  EXPECT_TRUE(lit.rms_norm_fp32_weight);
  const FrameworkBehaviour hf = plan_for("hf").behaviour;
  EXPECT_TRUE(hf.model_dropout);
  EXPECT_FALSE(hf.fused_gelu);
  EXPECT_FALSE(hf.rms_norm_fp32_weight);
  EXPECT_TRUE(hf.loss_in_model);
  EXPECT_FALSE(lit.loss_in_model);
  EXPECT_FALSE(plan_for("torchtune@0.1").behaviour.loss_in_model);
  const FrameworkBehaviour tt = plan_for("torchtune", Method::lora).behaviour;
  EXPECT_EQ(tt.loss_chunks, 8);
  EXPECT_TRUE(tt.logits_freed_after_loss);
  EXPECT_FALSE(tt.optimizer_in_backward);
  EXPECT_TRUE(plan_for("torchtune", Method::full).behaviour.optimizer_in_backward);
  const FrameworkBehaviour tt01 = plan_for("torchtune@0.1", Method::lora).behaviour;
  EXPECT_EQ(tt01.loss_chunks, 0);
  EXPECT_TRUE(tt01.outputs_kept);
  EXPECT_FALSE(tt01.loss_upcast);
  EXPECT_TRUE(tt01.fp32_logits_in_model);
  EXPECT_TRUE(tt01.loss_shift_copy);
  EXPECT_FALSE(tt.fp32_logits_in_model);
  EXPECT_FALSE(tt.loss_shift_copy);
  EXPECT_TRUE(plan_for("unsloth").behaviour.offload_checkpoints);
  EXPECT_TRUE(plan_for("trl").behaviour.metrics_logits_copy);
  EXPECT_FALSE(plan_for("trl", Method::full, "trl=0.14").behaviour.metrics_logits_copy);
  const FrameworkBehaviour mlx = plan_for("mlx").behaviour;
  EXPECT_TRUE(mlx.unified_memory);
  EXPECT_FALSE(mlx.cublas_workspaces);
  EXPECT_EQ(mlx.lora_last_layers, 16);
  const FrameworkBehaviour hf445 = plan_for("hf@4.45").behaviour;
  EXPECT_TRUE(hf445.fp32_logits_in_model);
  EXPECT_TRUE(hf445.loss_shift_copy);
  const FrameworkBehaviour hf447 = plan_for("hf@4.47").behaviour;
  EXPECT_FALSE(hf447.fp32_logits_in_model);
  EXPECT_TRUE(hf447.loss_shift_copy);
  EXPECT_FALSE(plan_for("hf@4.49").behaviour.loss_shift_copy);
  EXPECT_TRUE(
      plan_for("litgpt", Method::qlora, "bitsandbytes=0.43.1").behaviour.bnb_saves_4bit_input);
  EXPECT_FALSE(
      plan_for("litgpt", Method::qlora, "bitsandbytes=0.44").behaviour.bnb_saves_4bit_input);
  EXPECT_FALSE(plan_for("litgpt", Method::qlora).behaviour.bnb_saves_4bit_input);
}

TEST(FrameworkTable, ProfileDefaults) {
  EXPECT_EQ(profile_default("litgpt", "lora", "precision"), "bf16");
  EXPECT_EQ(profile_default("litgpt", "qlora", "optimizer"), "paged-adamw");
  EXPECT_EQ(profile_default("litgpt", "lora", "optimizer"), "");
  EXPECT_EQ(profile_default("torchtune", "full", "optimizer"), "paged-adamw-8bit");
  EXPECT_EQ(profile_default("torchtune", "lora", "checkpointing"), "full");
  EXPECT_EQ(profile_default("unsloth", "lora", "loss"), "fused");
  EXPECT_EQ(profile_default("hf", "full", "precision"), "");
  // TRL's SFTConfig checkpoints by default from 0.22 on (the current release when no version is
  // given); before, TrainingArguments' False held.
  EXPECT_EQ(profile_default("trl", "lora", "checkpointing"), "full");
  EXPECT_EQ(profile_default("trl", "lora", "checkpointing", {{"trl", "0.22.0"}}), "full");
  EXPECT_EQ(profile_default("trl", "lora", "checkpointing", {{"trl", "0.21.1"}}), "");
  EXPECT_EQ(profile_default("trl", "lora", "checkpointing", {{"transformers", "4.40"}}), "full");
  EXPECT_EQ(profile_default("hf", "lora", "checkpointing"), "");
  // Its SFT loss is chunked_nll from 1.7 on (PR #5846).
  EXPECT_EQ(profile_default("trl", "lora", "loss"), "chunked");
  EXPECT_EQ(profile_default("trl", "lora", "loss", {{"trl", "1.6.0"}}), "");
  EXPECT_EQ(profile_default("trl", "lora", "loss", {{"trl", "1.7"}}), "chunked");
}

// The loss chain per profile, in units of N x V (N = 512 tokens, V = 8,192), bf16 model.
TEST(FrameworkLedger, LossChainPerProfile) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  // hf: bf16 logits 2 + fp32 upcast 4 + saved log_softmax 4 = 10; backward start 4 + 8 = 12.
  const Ledger hf = estimate(m, plan_for("hf"));
  EXPECT_EQ(tenant_in(hf, Tenant::logits, 1, Phase::forward), 10 * kNV);
  EXPECT_EQ(tenant_in(hf, Tenant::logits, 1, Phase::backward_start), 12 * kNV);
  // litgpt: Fabric's bf16-true casts the model output to fp32 (HalfPrecision.convert_output).
  // The loop computes the loss after `logits = model(...)` has released the previous step's
  // logits (loss_in_model off), so the forward slot holds the kept fp32 logits 4 + the previous
  // step's 4 + the bf16 lm_head output until its conversion 2 = 10, and the end of forward the
  // fp32 logits 4 + fp32 log_softmax 4 = 8; at backward start 4 + 4 + one 256-token chunk's two
  // fp32 grads (2 x 4 x N/2 x V = 4) = 12; the kept logits (4) stay through the optimizer step.
  // Measured on CPU, phase by phase: validation/data/litgpt-cpu.jsonl.
  const Ledger lit = estimate(m, plan_for("litgpt"));
  EXPECT_EQ(tenant_in(lit, Tenant::logits, 1, Phase::forward), 10 * kNV);
  EXPECT_EQ(tenant_in(lit, Tenant::logits, 1, Phase::end_of_forward), 8 * kNV);
  EXPECT_EQ(tenant_in(lit, Tenant::logits, 1, Phase::backward_start), 12 * kNV);
  EXPECT_EQ(tenant_in(lit, Tenant::logits, 1, Phase::optimizer_step), 4 * kNV);
  EXPECT_EQ(tenant_in(lit, Tenant::logits, 0, Phase::forward), 6 * kNV);  // no previous step
  // With the loss inside the model call (HF's `outputs.loss` in a loop that keeps the output),
  // the previous logits are still held while log_softmax is saved: 4 + 4 + 4 = 12.
  TrainingPlan in_model = plan_for("litgpt");
  in_model.behaviour.loss_in_model = true;
  EXPECT_EQ(tenant_in(estimate(m, in_model), Tenant::logits, 1, Phase::forward), 12 * kNV);
  // torchtune 0.3: bf16 logits 2 + one of 8 chunks upcast (4/8) + saved fp32 log_softmax 4 = 6.5;
  // backward start 4 + one chunk's fp32 grads (8/8) = 5.
  const Ledger tt = estimate(m, plan_for("torchtune", Method::lora));
  EXPECT_EQ(tenant_in(tt, Tenant::logits, 1, Phase::forward), 13 * kNV / 2);
  EXPECT_EQ(tenant_in(tt, Tenant::logits, 1, Phase::backward_start), 5 * kNV);
  // torchtune 0.3 with compile: True compiles each chunk's compute_cross_entropy: the bf16
  // logits 2 stay saved, with 2 x 4 B per row (512 rows: 4,096 B); no upcast, no log_softmax; at
  // backward start one chunk's bf16 gradient (2/8).
  TrainingPlan compiled = plan_for("torchtune", Method::lora);
  compiled.behaviour.compiled_loss = true;
  const Ledger ttc = estimate(m, compiled);
  EXPECT_EQ(tenant_in(ttc, Tenant::logits, 1, Phase::forward), 2 * kNV + 4096);
  EXPECT_EQ(tenant_in(ttc, Tenant::logits, 1, Phase::backward_start), 2 * kNV + 4096 + kNV / 4);
  // torchtune 0.1: the model returns `self.output(h).float()` and the recipe keeps the shifted
  // contiguous copy, so the forward slot holds the previous step's fp32 logits 4 + this step's 4
  // + the bf16 lm_head output until the cast 2 = 10; the end of forward the kept 4 + one more
  // fp32 copy (the shift while the model's output lives, then log_softmax's contiguous copy of
  // the transposed logits) 4 + the fp32 log_softmax 4 = 12; backward start 4 + 4 + the two fp32
  // grads 8 = 16. Measured on CPU: validation/data/torchtune-loss-probe.json (3 and 4 fp32 copies
  // at the forward and backward peaks).
  const Ledger tt01 = estimate(m, plan_for("torchtune@0.1", Method::lora));
  EXPECT_EQ(tenant_in(tt01, Tenant::logits, 1, Phase::forward), 10 * kNV);
  EXPECT_EQ(tenant_in(tt01, Tenant::logits, 1, Phase::end_of_forward), 12 * kNV);
  EXPECT_EQ(tenant_in(tt01, Tenant::logits, 1, Phase::backward_start), 16 * kNV);
  EXPECT_EQ(tenant_in(tt01, Tenant::logits, 0, Phase::forward), 6 * kNV);  // no previous step
  // transformers 4.45: fp32 logits 4 + shifted fp32 copy 4 + log_softmax 4 = 12 (no upcast).
  const Ledger old = estimate(m, plan_for("hf@4.45"));
  EXPECT_EQ(tenant_in(old, Tenant::logits, 1, Phase::forward), 12 * kNV);
  // transformers 4.47: bf16 logits 2 + shifted copy 4 + upcast 4 + log_softmax 4 = 14.
  EXPECT_EQ(tenant_in(estimate(m, plan_for("hf@4.47")), Tenant::logits, 1, Phase::forward),
            14 * kNV);
  // trl: hf plus the bf16 copy for mean_token_accuracy (2) = 12.
  EXPECT_EQ(tenant_in(estimate(m, plan_for("trl")), Tenant::logits, 1, Phase::forward), 12 * kNV);
}

// litgpt's GPT keeps its own lm_head beside a tied embedding (model.py:25-28; the converter copies
// the embedding into it): the scaled Llama-3.2 config (tied, V 32,064, hidden 512) holds one more
// 32,064 x 512 x 2 B = 32,833,536 B of bf16 weights under litgpt than under hf, for LoRA and
// full; an untied model (qwen3-tiny) is unchanged.
TEST(FrameworkLedger, LitgptUntiesTiedEmbeddings) {
  const LoadedModel tied = testing_support::validation_model("litgpt/llama32-scaled");
  for (Method method : {Method::lora, Method::full}) {
    const TrainingPlan lit = plan_for("litgpt", method);
    TrainingPlan shared = lit;
    shared.behaviour.unties_embeddings = false;  // the same profile with one matrix
    EXPECT_EQ(tenant_in(estimate(tied, lit), Tenant::weights, 0, Phase::loaded) -
                  tenant_in(estimate(tied, shared), Tenant::weights, 0, Phase::loaded),
              32'833'536);
  }
  const LoadedModel untied = testing_support::validation_model("qwen3-tiny");
  TrainingPlan plain = plan_for("litgpt");
  plain.behaviour.unties_embeddings = false;
  EXPECT_EQ(tenant_in(estimate(untied, plan_for("litgpt")), Tenant::weights, 0, Phase::loaded),
            tenant_in(estimate(untied, plain), Tenant::weights, 0, Phase::loaded));
}

const LedgerItem* find_item(const Ledger& l, const std::string& id) {
  for (const LedgerItem& i : l.items) {
    if (i.id == id) return &i;
  }
  return nullptr;
}

// litgpt's QLoRA quantises the lm_head (Lightning's BitsandbytesPrecision converts every
// nn.Linear; litgpt names no ignore_modules), and Lightning quantises through an fp16 copy, so
// MatMul4Bit's dequantize_4bit writes fp16 and `.to(bf16)` makes a second copy. On qwen3-tiny
// (V 8,192, hidden 128, intermediate 384) the largest 4-bit weight becomes the 8,192 x 128 =
// 1,048,576-element lm_head.
TEST(FrameworkLedger, LitgptQuantisesTheLmHead) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan lit = plan_for("litgpt", Method::qlora, "bitsandbytes=0.42");
  EXPECT_TRUE(lit.behaviour.quantises_lm_head);
  // The settings path (command line, rows) starts litgpt's QLoRA without PEFT's
  // prepare_model_for_kbit_training, which litgpt never calls; HF keeps it.
  auto from = [](const char* framework) {
    auto r = plan_from({{"framework", framework, "--framework"}, {"method", "qlora", "--method"}});
    EXPECT_TRUE(r.ok());
    return r ? r->plan : TrainingPlan{};
  };
  EXPECT_FALSE(from("litgpt").quant.prepare_kbit);
  EXPECT_FALSE(from("torchtune").quant.prepare_kbit);
  EXPECT_TRUE(from("hf").quant.prepare_kbit);
  lit.quant.prepare_kbit = false;
  TrainingPlan kept = lit;
  kept.behaviour.quantises_lm_head = false;
  const Ledger l = estimate(m, lit);
  const Ledger k = estimate(m, kept);
  // Dequantised copy: 1,048,576 x (2 B fp16 + 2 B bf16) + 16,384 absmax blocks x 4 B; with the
  // lm_head kept 16-bit, the MLP's 49,152 elements x 4 B + 768 x 4 B.
  ASSERT_NE(find_item(l, "temporaries.dequantised_weight"), nullptr);
  EXPECT_EQ(find_item(l, "temporaries.dequantised_weight")->bytes, 4'194'304 + 65'536);
  EXPECT_EQ(find_item(k, "temporaries.dequantised_weight")->bytes, 196'608 + 3'072);
  // The 16-bit lm_head (2 B per element) leaves the weights; its 4-bit form joins them.
  const std::int64_t w_lit = tenant_in(l, Tenant::weights, 0, Phase::loaded);
  const std::int64_t w_kept = tenant_in(k, Tenant::weights, 0, Phase::loaded);
  EXPECT_LT(w_lit, w_kept - 1'048'576 * 2 * 2 / 3);
  // bitsandbytes < 0.43.2 keeps the 4-bit lm_head's bf16 input (2 x 256 tokens x 128 x 2 B) in
  // MatMul4Bit's ctx, so the graph holds it beside the layers' 4-bit inputs.
  ASSERT_NE(find_item(l, "activations.held_by_graph"), nullptr);
  ASSERT_NE(find_item(k, "activations.held_by_graph"), nullptr);
  EXPECT_EQ(find_item(l, "activations.held_by_graph")->bytes -
                find_item(k, "activations.held_by_graph")->bytes,
            2 * 256 * 128 * 2);
  EXPECT_EQ(find_item(l, "activations.final_norm_head_input")->bytes,
            find_item(k, "activations.final_norm_head_input")->bytes);
  // The HF profile keeps the lm_head 16-bit (transformers get_keys_to_not_convert) and
  // dequantises in the dtype it loaded (bf16): one copy.
  const Ledger hf = estimate(m, plan_for("hf", Method::qlora));
  EXPECT_EQ(find_item(hf, "temporaries.dequantised_weight")->bytes, 49'152 * 2 + 3'072);
}

TEST(FrameworkLedger, OptimizerInBackwardHoldsOneGradient) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("hf");
  p.behaviour.optimizer_in_backward = true;
  const Ledger l = estimate(m, p);
  // The largest trainable tensor is the 8,192 x 128 embedding (or lm_head): 1,048,576 x 2 B.
  EXPECT_EQ(tenant_in(l, Tenant::gradients, 1, Phase::backward), 1048576 * 2);
  EXPECT_EQ(tenant_in(l, Tenant::gradients, 1, Phase::optimizer_step), 0);
  EXPECT_GT(tenant_in(l, Tenant::optimizer_states, 0, Phase::backward), 0);
  const Ledger plain = estimate(m, plan_for("hf"));
  EXPECT_EQ(tenant_in(plain, Tenant::optimizer_states, 0, Phase::backward), 0);
}

TEST(FrameworkLedger, OffloadKeepsTwoCheckpoints) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("unsloth");
  p.checkpointing = Checkpointing::full;
  std::int64_t ckpt = 0;
  for (const LedgerItem& i : estimate(m, p).items) {
    if (i.label.rfind("Checkpointed layer inputs", 0) == 0) ckpt = i.bytes;
  }
  // 2 of 4 layers x 512 tokens x 128 hidden x 2 B.
  EXPECT_EQ(ckpt, 2 * 512 * 128 * 2);
}

TEST(FrameworkLedger, AdapterDtypeFollowsTheProfile) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  auto adapter_label = [&](const std::string& fw) {
    TrainingPlan p = plan_for(fw, Method::lora);
    for (const LedgerItem& i : estimate(m, p).items) {
      if (i.label.rfind("Adapter weights", 0) == 0) return i.label;
    }
    return std::string();
  };
  EXPECT_EQ(adapter_label("hf"), "Adapter weights, f32 (trainable)");
  EXPECT_EQ(adapter_label("litgpt"), "Adapter weights, bf16 (trainable)");
  EXPECT_EQ(adapter_label("torchtune"), "Adapter weights, bf16 (trainable)");
}

TEST(FrameworkLedger, OldBitsandbytesKeepsFourBitInputs) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  const auto acts = [&](const std::string& versions) {
    TrainingPlan p = plan_for("hf", Method::qlora, versions);
    p.lora.targets = {"q", "v"};
    return tenant_in(estimate(m, p), Tenant::activations, 1, Phase::end_of_forward);
  };
  // LoRA on q,v only (fp32 stream after prepare_model_for_kbit_training): the q/k/v input is
  // already kept for the fp32 adapters and the o_proj input by SDPA, so what MatMul4Bit adds is
  // the MLP input (128) and the down_proj input (384), 4 B each, per token per layer: 4 layers x
  // 512 tokens.
  const std::int64_t extra = acts("bitsandbytes=0.43") - acts("bitsandbytes=0.44");
  EXPECT_EQ(extra, 4 * 512 * 4 * (128 + kIntermediate));
}

TEST(FrameworkLedger, GraphHeldInputsOutliveBackward) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  const auto plan = [&](const std::string& fw, const std::string& versions) {
    TrainingPlan p = plan_for(fw, Method::qlora, versions);
    p.lora.targets = {"q", "v"};
    p.quant.prepare_kbit = false;  // a bf16 stream: 2 B per element
    p.behaviour.quantises_lm_head = false;
    return p;
  };
  // Per token per layer, the distinct 4-bit inputs: q/k/v input 128, attention output 4 heads x
  // 32 = 128, MLP input 128, down_proj input 384, 2 B each; 4 layers x 512 tokens.
  const std::int64_t held = 4 * 512 * (128 + 128 + 128 + kIntermediate) * 2;
  const Ledger hf = estimate(m, plan("hf", "bitsandbytes=0.43.1"));
  const LedgerItem* h = find_item(hf, "activations.held_by_graph");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->bytes, held);
  // The Trainer lets the loss go after backward: held through it, gone at the optimizer step.
  EXPECT_TRUE(h->live & phase_bit(1, Phase::backward));
  EXPECT_TRUE(h->live & phase_bit(1, Phase::end_of_backward));
  EXPECT_FALSE(h->live & phase_bit(1, Phase::optimizer_step));
  EXPECT_FALSE(h->live & phase_bit(1, Phase::loaded));
  EXPECT_EQ(find_item(hf, "activations.previous_held_by_graph"), nullptr);
  // In forward the held line adds to what 0.43.2 saves only the inputs nothing else keeps: all
  // but the attention output, which SDPA saves either way.
  const Ledger fixed = estimate(m, plan("hf", "bitsandbytes=0.43.2"));
  EXPECT_EQ(find_item(fixed, "activations.held_by_graph"), nullptr);
  EXPECT_EQ(tenant_in(hf, Tenant::activations, 1, Phase::forward) -
                tenant_in(fixed, Tenant::activations, 1, Phase::forward),
            held - 4 * 512 * 128 * 2);
  // Late in backward the held inputs are all still there; 0.43.2 has freed the rest of the
  // layers' but the last one's.
  EXPECT_GE(tenant_in(hf, Tenant::activations, 1, Phase::backward),
            held + tenant_in(fixed, Tenant::activations, 1, Phase::backward) - 512 * 128 * 2);
  // litgpt keeps `logits` and `loss` until the next micro-batch's forward returns: the previous
  // step's inputs are live in that forward beside its own.
  const Ledger lit = estimate(m, plan("litgpt", "bitsandbytes=0.42.0"));
  const LedgerItem* kept = find_item(lit, "activations.held_by_graph");
  const LedgerItem* prev = find_item(lit, "activations.previous_held_by_graph");
  ASSERT_NE(kept, nullptr);
  ASSERT_NE(prev, nullptr);
  EXPECT_EQ(prev->bytes, kept->bytes);
  EXPECT_TRUE(kept->live & phase_bit(1, Phase::loaded));
  EXPECT_TRUE(kept->live & phase_bit(0, Phase::optimizer_step));
  EXPECT_EQ(prev->live, phase_bit(1, Phase::forward));
}

// The CPU probe's model (validation/kv_cache_probe.py): 2 layers, hidden 256, 8 heads of 32.
LoadedModel kv_probe_model(const std::string& model_type, int kv_heads) {
  const std::string cfg = R"({"model_type": ")" + model_type +
                          R"(", "vocab_size": 512, "hidden_size": 256, "intermediate_size": 512,
      "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": )" +
                          std::to_string(kv_heads) +
                          R"(, "tie_word_embeddings": false, "hidden_act": "silu"})";
  auto m = model_from_config_text(cfg, "probe");
  EXPECT_TRUE(m.ok());
  return std::move(m.value());
}

// Activation bytes in the steady step's phase with the output's KV cache minus without, at the
// probe's batch 4 x 256.
std::int64_t kv_cache_difference(const LoadedModel& m, TrainingPlan p, Phase ph) {
  p.batch = 4;
  p.seq = 256;
  p.behaviour.kv_cache_in_output = false;
  const Ledger off = estimate(m, p);
  p.behaviour.kv_cache_in_output = true;
  const Ledger on = estimate(m, p);
  return tenant_in(on, Tenant::activations, 1, ph) - tenant_in(off, Tenant::activations, 1, ph);
}

// The model output's DynamicCache (use_cache), against validation/data/kv-cache-probe.json: a
// Llama of 2 layers, 8 heads of 32, bf16, batch 4 x 256, step 3. The cache holds 2 layers x
// 1,024 tokens x 2 (k, v) x kv heads x 32 x 2 B: 524,288 B with 2 kv heads, 2,097,152 with 8.
// Differences with use_cache=False per phase, as the probe measured them: a kept output holds the
// cache past backward and into the next forward; where the attention saves the cache's own k and
// v (no repeat_kv copy) it adds nothing until backward would free them; with a padding mask and
// fewer kv heads SDPA saves repeated copies and the cache is extra from forward on. A dropped
// output (the Trainer's compute_loss) adds only that extra, and only until the loss returns (the
// probe deletes the output before its end_of_forward mark; trainmem keeps the line through the
// loss, which the HF forward computes while the output exists).
TEST(FrameworkLedger, OutputKvCacheMatchesTheCpuProbe) {
  const auto diff = [](int kv, bool mask, bool kept, Phase ph) {
    TrainingPlan p = plan_for("hf");
    p.behaviour.padding_mask = mask;
    p.behaviour.outputs_kept = kept;
    return kv_cache_difference(kv_probe_model("llama", kv), p, ph);
  };
  constexpr std::int64_t kCache2 = 2 * 1024 * 2 * 2 * 32 * 2;
  constexpr std::int64_t kCache8 = 4 * kCache2;
  EXPECT_EQ(kCache2, 524288);
  for (const auto& [kv, cache] : {std::pair{2, kCache2}, std::pair{8, kCache8}}) {
    // Kept, no mask: the saved k and v are the cache's.
    EXPECT_EQ(diff(kv, false, true, Phase::forward), cache);  // the previous step's
    EXPECT_EQ(diff(kv, false, true, Phase::end_of_forward), 0);
    EXPECT_EQ(diff(kv, false, true, Phase::end_of_backward), cache);
    EXPECT_EQ(diff(kv, false, true, Phase::optimizer_step), cache);
    // Late in backward one layer's k and v would be all that is left of them.
    EXPECT_EQ(diff(kv, false, true, Phase::backward), cache / 2);
    // Dropped, no mask: nothing.
    for (Phase ph :
         {Phase::forward, Phase::end_of_forward, Phase::backward, Phase::optimizer_step}) {
      EXPECT_EQ(diff(kv, false, false, ph), 0);
    }
  }
  // Kept, mask, 2 kv heads: repeat_kv copies, so the cache is extra from forward on.
  EXPECT_EQ(diff(2, true, true, Phase::forward), 2 * kCache2);
  EXPECT_EQ(diff(2, true, true, Phase::end_of_forward), kCache2);
  EXPECT_EQ(diff(2, true, true, Phase::backward), kCache2);
  EXPECT_EQ(diff(2, true, true, Phase::optimizer_step), kCache2);
  // Kept, mask, 8 kv heads: repeat_kv(x, 1) is x, as without the mask.
  EXPECT_EQ(diff(8, true, true, Phase::end_of_forward), 0);
  EXPECT_EQ(diff(8, true, true, Phase::optimizer_step), kCache8);
  // Dropped, mask, 2 kv heads: extra until the loss returns.
  EXPECT_EQ(diff(2, true, false, Phase::forward), kCache2);
  EXPECT_EQ(diff(2, true, false, Phase::end_of_forward), kCache2);
  EXPECT_EQ(diff(2, true, false, Phase::backward_start), 0);
  EXPECT_EQ(diff(8, true, false, Phase::forward), 0);
}

// Phi-3 (fused qkv_proj, v a view of its output) in the same probe, kept, no mask: transformers
// 5's cache copies the states, so the attention saves the cache's copy of v (kv heads) instead of
// the view that kept the whole (heads + 2 kv heads) x 32 output. Per token per layer the saved v
// shrinks from (8 + 2 kv) x 32 x 2 B to kv x 32 x 2 B: -640 B with 2 kv heads, -1,024 B with 8,
// over 2 layers x 1,024 tokens. Before transformers 5 the cache holds the view itself.
// TRL's chunked_nll against validation/data/trl-chunked-loss-probe.json: a 2-layer bf16 Llama
// (V 8,192, 8 heads, intermediate 2 x hidden, untied), batch 4 x 256, AdamW, step 3; chunked minus
// full loss, per phase, with the lm_head trained (full) or frozen (everything else trains). The
// probe's backward is the peak of all of backward: the larger of trainmem's backward_start and
// backward.
std::int64_t live_in(const Ledger& l, Phase ph) {
  std::int64_t n = 0;
  for (const LedgerItem& i : l.items) {
    if (i.live & phase_bit(1, ph)) n += i.bytes;
  }
  return n;
}

TEST(FrameworkLedger, TrlChunkedLossMatchesTheCpuProbe) {
  struct Row {
    int hidden;
    bool head_trains;
    std::int64_t forward, end_of_forward, backward;  // measured, chunked minus full
  };
  const Row rows[] = {{256, true, -49'808'188, -33'548'348, -53'726'000},
                      {256, false, -49'808'188, -33'024'060, -57'658'160},
                      {1024, true, -38'804'548, -33'554'492, -4'194'364},
                      {1024, false, -38'804'548, -31'457'340, -29'358'896}};
  for (const Row& r : rows) {
    const std::string cfg = R"({"model_type": "llama", "vocab_size": 8192, "hidden_size": )" +
                            std::to_string(r.hidden) + R"(, "intermediate_size": )" +
                            std::to_string(2 * r.hidden) + R"(, "num_hidden_layers": 2,
        "num_attention_heads": 8, "num_key_value_heads": 8, "tie_word_embeddings": false})";
    auto m = model_from_config_text(cfg, "probe");
    ASSERT_TRUE(m.ok());
    TrainingPlan p = plan_for("hf");
    p.batch = 4;
    p.seq = 256;
    p.optimizer_impl = OptimizerImpl::foreach;
    if (!r.head_trains) {
      p.method = Method::freeze;
      p.freeze.train_modules = {"q", "k", "v", "o", "gate", "up", "down", "norm", "embed"};
    }
    const Ledger full = estimate(*m, p);
    p.loss = Loss::chunked;
    const Ledger chunked = estimate(*m, p);
    const auto diff = [&](Phase ph) { return live_in(chunked, ph) - live_in(full, ph); };
    const auto backward = [](const Ledger& l) {
      return std::max(live_in(l, Phase::backward_start), live_in(l, Phase::backward));
    };
    const std::string what = std::to_string(r.hidden) + (r.head_trains ? " trained" : " frozen");
    // The labels (8 B per token) and a few scalars trainmem does not price: within 16 KB.
    const auto within = [](std::int64_t got, std::int64_t want) {
      return got - want <= 16'384 && want - got <= 16'384;
    };
    EXPECT_TRUE(within(diff(Phase::forward), r.forward)) << what << ": " << diff(Phase::forward);
    EXPECT_TRUE(within(diff(Phase::end_of_forward), r.end_of_forward))
        << what << ": " << diff(Phase::end_of_forward);
    const std::int64_t bwd = backward(chunked) - backward(full);
    if (r.head_trains) {
      // An upper bound: the weight copy's gradient and the chunk's tensors do not all coexist.
      EXPECT_GE(bwd, r.backward) << what;
      const LedgerItem* line = nullptr;
      for (const LedgerItem& i : chunked.items) {
        if (i.id == "logits.chunked_backward") line = &i;
      }
      ASSERT_NE(line, nullptr);
      EXPECT_LE(bwd - r.backward, line->bytes / 10) << what;
    } else {
      EXPECT_TRUE(within(bwd, r.backward)) << what << ": " << bwd;
    }
  }
}

TEST(FrameworkLedger, OutputKvCacheCopiesAFusedViewInTransformers5) {
  const auto diff = [](int kv, Phase ph, const std::string& versions) {
    TrainingPlan p = plan_for("hf", Method::full, versions);
    p.behaviour.outputs_kept = true;
    return kv_cache_difference(kv_probe_model("phi3", kv), p, ph);
  };
  constexpr std::int64_t kTokens = 2 * 1024;                       // 2 layers x 1,024 tokens
  EXPECT_EQ(diff(2, Phase::end_of_forward, ""), -640 * kTokens);   // probe: -1,310,720
  EXPECT_EQ(diff(2, Phase::forward, ""), 524288 - 640 * kTokens);  // probe: -786,432
  EXPECT_EQ(diff(2, Phase::optimizer_step, ""), 524288);
  EXPECT_EQ(diff(8, Phase::end_of_forward, ""), -1024 * kTokens);  // probe: -2,097,152
  EXPECT_EQ(diff(8, Phase::forward, ""), 0);
  EXPECT_EQ(diff(8, Phase::optimizer_step, ""), 2097152);
  // transformers 4.x: the cache holds the view; held past backward are k (8 x 32 x 2 B) and the
  // whole fused output the v view keeps ((8 + 2 x 8) x 32 x 2 B) per token per layer.
  EXPECT_EQ(diff(8, Phase::end_of_forward, "transformers=4.46"), 0);
  EXPECT_EQ(diff(8, Phase::optimizer_step, "transformers=4.46"), (512 + 1536) * kTokens);
}

TEST(FrameworkLedger, TrainerBuildsTheKvCacheBeforeTransformers5) {
  // The Trainer before transformers 5 leaves the config's use_cache; 5 turns it off, and so do
  // TRL >= 0.22 and gradient checkpointing.
  EXPECT_TRUE(plan_for("hf", Method::full, "transformers=4.57").behaviour.kv_cache_in_output);
  EXPECT_FALSE(plan_for("hf").behaviour.kv_cache_in_output);
  EXPECT_FALSE(plan_for("hf", Method::full, "transformers=5.0").behaviour.kv_cache_in_output);
  EXPECT_FALSE(
      plan_for("trl", Method::full, "transformers=4.57,trl=0.22").behaviour.kv_cache_in_output);
  EXPECT_TRUE(
      plan_for("trl", Method::full, "transformers=4.57,trl=0.21").behaviour.kv_cache_in_output);
  EXPECT_FALSE(plan_for("litgpt").behaviour.kv_cache_in_output);
  // Unsloth's patched forward turns it off in training whatever the transformers version.
  EXPECT_FALSE(plan_for("unsloth", Method::full, "transformers=4.57").behaviour.kv_cache_in_output);
  EXPECT_TRUE(plan_for("axolotl", Method::full, "transformers=4.57").behaviour.kv_cache_in_output);
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("hf", Method::full, "transformers=4.57");
  p.behaviour.padding_mask = true;  // qwen3-tiny: 4 heads, 2 kv heads of 32
  const Ledger l = estimate(m, p);
  const LedgerItem* cache = find_item(l, "activations.kv_cache");
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->bytes, 4 * 2 * 256 * (2 * 2 * 32 * 2));  // 4 layers x 512 tokens
  p.checkpointing = Checkpointing::full;
  EXPECT_EQ(find_item(estimate(m, p), "activations.kv_cache"), nullptr);
}

TEST(FrameworkLedger, MlxAdaptsTheLastSixteenLayersAndHasNoCublas) {
  const LoadedModel m = testing_support::load_or_fail("qwen3-0.6b");  // 28 layers
  const Ledger mlx = estimate(m, plan_for("mlx", Method::lora));
  const Ledger hf = estimate(m, plan_for("hf", Method::lora));
  // 16 of 28 layers adapted: trainable params scale by 16/28.
  EXPECT_EQ(mlx.model.params_trainable * 28, hf.model.params_trainable * 16);
  for (const LedgerItem& i : mlx.items) EXPECT_NE(i.tenant, Tenant::overhead) << i.label;
}

// litgpt builds its own layers from the config's shapes (plan/framework_layers.h). The scaled
// Phi of validation/configs/litgpt/phi-scaled.json: hidden 512, MLP 2,048, 2 layers, HF's
// gelu_new and resid_pdrop 0.1; b2 x s256 = 512 tokens, bf16, full fine-tune, at the end of
// forward (every saved tensor live).
TEST(FrameworkLedger, LitgptBuildsItsOwnLayers) {
  ModelSpec phi;
  phi.activation = Activation::gelu_new;
  phi.norm = NormKind::layer_norm;
  phi.hidden_dropout = 0.1;
  phi.attention_dropout = 0.1;
  phi.embedding_dropout = 0.1;
  const ModelSpec lit = framework_layers(phi, plan_for("litgpt").behaviour);
  EXPECT_EQ(lit.activation, Activation::gelu_tanh);
  EXPECT_EQ(lit.norm, NormKind::layer_norm);
  EXPECT_EQ(lit.hidden_dropout, 0.0);
  EXPECT_EQ(lit.attention_dropout, 0.0);
  EXPECT_EQ(lit.embedding_dropout, 0.0);
  const ModelSpec hf = framework_layers(phi, plan_for("hf").behaviour);
  EXPECT_EQ(hf.activation, Activation::gelu_new);
  EXPECT_EQ(hf.hidden_dropout, 0.1);
  ModelSpec llama;
  llama.norm = NormKind::rms_norm;
  llama.activation = Activation::gelu;  // exact gelu stays: one op in both
  EXPECT_EQ(framework_layers(llama, plan_for("litgpt").behaviour).norm, NormKind::rms_norm_fp32);
  EXPECT_EQ(framework_layers(llama, plan_for("litgpt").behaviour).activation, Activation::gelu);
  EXPECT_EQ(framework_layers(llama, plan_for("hf").behaviour).norm, NormKind::rms_norm);

  const LoadedModel m = testing_support::validation_model("litgpt/phi-scaled");
  const TrainingPlan p = plan_for("litgpt");
  const auto acts = [&m](const TrainingPlan& plan) {
    return tenant_in(estimate(m, plan), Tenant::activations, 1, Phase::end_of_forward);
  };
  TrainingPlan gelu_new = p;
  gelu_new.behaviour.fused_gelu = false;
  // gelu_new saves 4 tensors of the MLP width, the fused gelu 1: 3 x 2,048 x 512 x 2 B x 2 layers.
  EXPECT_EQ(acts(gelu_new) - acts(p), 3LL * 2048 * 512 * 2 * 2);
  TrainingPlan dropout = p;
  dropout.behaviour.model_dropout = true;
  // resid_pdrop 0.1 on the attention and MLP outputs: a 1-byte CUDA mask per element, 2 per layer.
  EXPECT_EQ(acts(dropout) - acts(p), 2LL * 512 * 512 * 1 * 2);

  // The fp32 weight multiply of litgpt's RMSNorm: with trained weights (full) each norm saves
  // its normalised tensor in fp32, 2 B per element more than LlamaRMSNorm's bf16 one: 2 norms a
  // layer x 2 layers + the final norm, over 512 tokens x hidden 512.
  const LoadedModel tiny = testing_support::validation_model("litgpt/tinyllama-scaled");
  TrainingPlan bf16_mul = p;
  bf16_mul.behaviour.rms_norm_fp32_weight = false;
  const auto tiny_acts = [&tiny](const TrainingPlan& plan) {
    const Ledger l = estimate(tiny, plan);
    return tenant_in(l, Tenant::activations, 1, Phase::end_of_forward) +
           tenant_in(l, Tenant::logits, 1, Phase::end_of_forward);
  };
  EXPECT_EQ(tiny_acts(p) - tiny_acts(bf16_mul), 5LL * 512 * 512 * 2);
  // With frozen norm weights (LoRA) the normalised tensor is not saved either way.
  TrainingPlan lora = plan_for("litgpt", Method::lora);
  TrainingPlan lora_bf16 = lora;
  lora_bf16.behaviour.rms_norm_fp32_weight = false;
  EXPECT_EQ(tiny_acts(lora), tiny_acts(lora_bf16));
}

// --step-only prices the training step alone: litgpt's validation pass, its sample generation
// and the QLoRA load transient are run phases of the process, not of the step.
TEST(FrameworkLedger, StepOnlyLeavesOutTheRunPhases) {
  auto from = [](std::vector<PlanSetting> settings) {
    auto r = plan_from(settings);
    EXPECT_TRUE(r.ok());
    return r ? r->plan : TrainingPlan{};
  };
  const TrainingPlan run =
      from({{"framework", "litgpt", "--framework"}, {"method", "qlora", "--method"}});
  EXPECT_TRUE(run.behaviour.eval_between_steps);
  EXPECT_TRUE(run.behaviour.generates_sample);
  EXPECT_EQ(run.behaviour.load_quantiser, LoadQuantiser::lightning_bnb);
  const TrainingPlan step = from({{"framework", "litgpt", "--framework"},
                                  {"method", "qlora", "--method"},
                                  {"step_only", "true", "--step-only"}});
  EXPECT_FALSE(step.behaviour.eval_between_steps);
  EXPECT_FALSE(step.behaviour.generates_sample);
  EXPECT_EQ(step.behaviour.load_quantiser, LoadQuantiser::none);
  EXPECT_TRUE(step.behaviour.outputs_kept);  // the rest of the profile stays
  // false is the default and changes nothing.
  const TrainingPlan off =
      from({{"framework", "litgpt", "--framework"}, {"step_only", "false", "--step-only"}});
  EXPECT_TRUE(off.behaviour.eval_between_steps);
  // On the scaled Phi LoRA (q, v) the validation pass's full, unchunked logits exceed the step
  // (they peak in the steady state's "loaded" slot, between steps); without it the peak is a
  // training slot.
  const LoadedModel m = testing_support::validation_model("litgpt/phi-scaled");
  TrainingPlan lora = plan_for("litgpt", Method::lora);
  lora.lora.targets = {"q", "v"};
  lora.lora.rank = 32;
  const Totals with_eval = totals(estimate(m, lora));
  lora.behaviour.eval_between_steps = false;
  lora.behaviour.generates_sample = false;
  const Totals step_alone = totals(estimate(m, lora));
  EXPECT_GT(with_eval.peak_bytes, step_alone.peak_bytes);
  EXPECT_NE(slot_name(with_eval.peak_slot).find("loaded"), std::string::npos)
      << slot_name(with_eval.peak_slot);
  EXPECT_EQ(slot_name(step_alone.peak_slot).find("loaded"), std::string::npos)
      << slot_name(step_alone.peak_slot);
}

// litgpt's LoRAQKVLinear on a fused qkv (GPT-NeoX's query_key_value): one lora_A of r rows per
// enabled projection, one lora_B over the enabled widths (litgpt 0.4.13 lora.py:233-244). The
// scaled GPT-NeoX (4 heads of 128, hidden 512, 2 layers) at r 32: q and v, lora_A 64 x 512 =
// 32,768 and lora_B 1,024 x 32 = 32,768 per layer; q alone, 32 x 512 and 512 x 32, 16,384 each.
// (PEFT's adapter on the fused weight is 32 x 512 and 1,536 x 32 whatever is named.) A model whose
// q, k and v are separate tensors gets one adapter each, the same shapes split per projection.
TEST(FrameworkLedger, LitgptQkvAdapterShapes) {
  const LoadedModel m = testing_support::validation_model("litgpt/neox-scaled");
  auto adapters = [&](std::vector<std::string> targets) {
    TrainingPlan lora = plan_for("litgpt", Method::lora);
    lora.lora.targets = std::move(targets);
    lora.lora.rank = 32;
    std::pair<std::int64_t, std::int64_t> ab{0, 0};
    for (const TensorGroup& g : apply_method(m, lora).groups) {
      if (g.adapter == AdapterPart::lora_a) ab.first += group_params(g);
      if (g.adapter == AdapterPart::lora_b) ab.second += group_params(g);
    }
    return ab;
  };
  EXPECT_EQ(adapters({"q", "v"}),
            std::make_pair(std::int64_t{2 * 32'768}, std::int64_t{2 * 32'768}));
  EXPECT_EQ(adapters({"q"}), std::make_pair(std::int64_t{2 * 16'384}, std::int64_t{2 * 16'384}));
}

// Under autocast a matmul keeps its bf16 weight copy only while its input requires grad. litgpt's
// bf16-mixed LoRA on q and v of the scaled GPT-NeoX (parallel block, hidden 512, intermediate
// 2,048, V 6,336, 2 layers, b2 x 256, lm_head in 2 chunks): layer 0 reads the frozen embedding's
// output, so its qkv, fc and proj (and lora_A) copies die with their matmuls; its dense reads
// the adapted attention. Kept: layer 1's qkv 786,432 + dense 262,144 + fc 1,048,576 + proj
// 1,048,576; layer 0's dense 262,144; lora_A 32,768 (layer 1) and lora_B 2 x 32,768; the head
// 3,244,032, twice: 9,994,240 x 2 B = 19,988,480 B, the bytes of the copies a saved-tensor dump
// of litgpt 0.4.13's step finds (docs/accuracy.md, litgpt CPU section).
TEST(FrameworkLedger, AutocastKeepsOnlyCopiesWhoseMatmulInputRequiresGrad) {
  const LoadedModel m = testing_support::validation_model("litgpt/neox-scaled");
  TrainingPlan lora = plan_for("litgpt", Method::lora);
  lora.precision = Precision::autocast_bf16;
  apply_framework(lora);
  lora.lora.targets = {"q", "v"};
  lora.lora.rank = 32;
  lora.batch = 2;
  lora.seq = 256;
  const Ledger ledger = estimate(m, lora);
  const LedgerItem* copies = find_item(ledger, "temporaries.autocast_weight_copies");
  ASSERT_NE(copies, nullptr);
  EXPECT_EQ(copies->bytes, 2 * (786'432 + 262'144 + 1'048'576 + 1'048'576 + 262'144 + 32'768 +
                                2 * 32'768 + 2 * 3'244'032));
}

// Qwen3-MoE tiny under autocast, full FT: autocast copies q 4 x 128 x 128, k and v 4 x 64 x 128
// each, o 4 x 128 x 128, the routers 4 x 8 x 128 and the untied lm_head 8,192 x 128 =
// 1,249,280 params x 2 B; the fused experts (3-D, run by grouped_mm outside autocast) none.
TEST(FrameworkLedger, AutocastCopiesNoFusedExperts) {
  const LoadedModel m = testing_support::validation_model("qwen3moe-tiny");
  TrainingPlan p = plan_for("hf", Method::full);
  p.precision = Precision::autocast_bf16;
  apply_framework(p);
  const Ledger ledger = estimate(m, p);
  const LedgerItem* copies = find_item(ledger, "temporaries.autocast_weight_copies");
  ASSERT_NE(copies, nullptr);
  EXPECT_EQ(copies->bytes, 2 * 1'249'280);
}

// Freezing all but the last two of qwen3-tiny's four layers, with gradient checkpointing, b2 x 128,
// bf16: transformers 5's gradient_checkpointing_enable makes the embedding output require grad,
// so every layer keeps its checkpointed input, 4 x 256 tokens x 128 hidden x 2 B = 262,144 B;
// on 4.57 (only PEFT does it) the frozen first two keep nothing: 131,072 B.
TEST(FrameworkLedger, CheckpointingMakesAFrozenPrefixKeepItsInputsOnTransformers5) {
  const LoadedModel m = testing_support::validation_model("qwen3-tiny");
  for (const auto& [versions, bytes] :
       {std::pair{"", 262'144}, std::pair{"transformers=4.57", 131'072}}) {
    TrainingPlan p = plan_for("hf", Method::freeze, versions);
    p.freeze.train_modules = {"q", "k", "v", "o", "gate", "up", "down", "norm"};
    p.freeze.train_layers = {2, 3};
    p.checkpointing = Checkpointing::full;
    p.seq = 128;
    apply_framework(p);
    const Ledger ledger = estimate(m, p);
    const LedgerItem* inputs = find_item(ledger, "activations.checkpoints");
    ASSERT_NE(inputs, nullptr) << versions;
    EXPECT_EQ(inputs->bytes, bytes) << versions;
  }
}

// The lm_head's backward (logits.cpp head_backward) on qwen3-tiny (V 8,192, h 128, untied), full
// fine-tune, SGD, fp32, 1 x 40 tokens, accumulation 2: the logits' gradient 40 x 8,192 x 4 B =
// 1,310,720 and the head's new weight gradient 8,192 x 128 x 4 B = 4,194,304 outweigh the loss's
// log_softmax output and two gradients (3 x 1,310,720), so backward start prices them and not
// the log_softmax output. At 2 x 128 tokens the loss's instant is the larger: no head lines.
// Under autocast (llama-tiny, 1 x 32) the cast's backward is the larger instant: the fp32
// gradient made from the bf16 one, 8,192 x 128 x 4 B, with no logits' gradient left.
TEST(FrameworkLedger, BackwardStartIsTheLmHeadsBackwardForSmallMicroBatches) {
  const auto item = [](const Ledger& l, const std::string& id) {
    const LedgerItem* i = find_item(l, id);
    return i == nullptr ? std::int64_t{-1} : i->bytes;
  };
  const LoadedModel qwen = testing_support::validation_model("qwen3-tiny");
  TrainingPlan p = plan_for("hf", Method::full);
  p.precision = Precision::fp32;
  p.optimizer = OptimizerKind::sgd;
  p.batch = 1;
  p.seq = 40;
  p.grad_accum = 2;
  apply_framework(p);
  const Ledger small = estimate(qwen, p);
  EXPECT_EQ(item(small, "logits.grad_at_head_backward"), 1'310'720);
  EXPECT_EQ(item(small, "temporaries.lm_head_gradient"), 4'194'304);
  EXPECT_EQ(item(small, "logits.loss_grads"), -1);
  p.batch = 2;
  p.seq = 128;
  const Ledger large = estimate(qwen, p);
  EXPECT_EQ(item(large, "temporaries.lm_head_gradient"), -1);
  EXPECT_EQ(item(large, "logits.loss_grads"), 2 * 4 * 256 * 8'192);
  const LoadedModel llama = testing_support::validation_model("llama-tiny");
  p.precision = Precision::autocast_bf16;
  p.batch = 1;
  p.seq = 32;
  const Ledger cast = estimate(llama, p);
  EXPECT_EQ(item(cast, "logits.grad_at_head_backward"), -1);
  EXPECT_EQ(item(cast, "temporaries.lm_head_gradient"), 4'194'304);
}

// Freezing all but layers 2 and 3 of gpt_neox-tiny (h 128, I 512, untied V 8,192) under autocast:
// the frozen layers 0 and 1 read an input that needs no grad, so their matmuls keep no bf16
// weight copy. Kept: layers 2 and 3's qkv 384 x 128, dense 128 x 128, fc 512 x 128 and proj
// 128 x 512 (196,608 each layer) and the frozen lm_head 8,192 x 128: 1,441,792 params x 2 B.
// Each run of trained or frozen layers is its own group (layers 0-1 frozen, 2-3 trained).
TEST(FrameworkLedger, FreezeSplitsGroupsIntoRunsOfLayers) {
  const LoadedModel m = testing_support::validation_model("gpt_neox-tiny");
  TrainingPlan p = plan_for("hf", Method::freeze);
  p.freeze.train_modules = {"q", "k", "v", "o", "gate", "up", "down", "norm"};
  p.freeze.train_layers = {2, 3};
  p.precision = Precision::autocast_bf16;
  p.batch = 3;
  p.seq = 300;
  apply_framework(p);
  const Ledger ledger = estimate(m, p);
  const LedgerItem* copies = find_item(ledger, "temporaries.autocast_weight_copies");
  ASSERT_NE(copies, nullptr);
  EXPECT_EQ(copies->bytes, 2 * 1'441'792);
  p.freeze.train_layers = {1, 3};
  std::vector<std::pair<std::int64_t, bool>> runs;
  for (const TensorGroup& g : apply_method(m, p).groups) {
    if (g.role == Role::o && !g.is_bias) runs.emplace_back(g.layer_first, g.trainable);
  }
  const std::vector<std::pair<std::int64_t, bool>> expected{
      {0, false}, {1, true}, {2, false}, {3, true}};
  EXPECT_EQ(runs, expected);
}

// StarCoder2 tiny (h 128, embedding dropout), LoRA on q,v with checkpointing, 3 x 200 tokens:
// enable_input_require_grads makes the frozen embedding's output a leaf its AccumulateGrad node
// keeps, beside the dropout's output that layer 0 reads: 600 x 128 x 4 B = 307,200 under
// autocast (an fp32 embedding), x 2 B in bf16; without checkpointing nothing makes it a leaf.
TEST(FrameworkLedger, FrozenEmbeddingOutputIsALeafKeptByItsGraph) {
  const LoadedModel m = testing_support::validation_model("starcoder2-tiny");
  TrainingPlan p = plan_for("hf", Method::lora);
  p.lora.targets = {"q", "v"};
  p.checkpointing = Checkpointing::full;
  p.precision = Precision::autocast_bf16;
  p.batch = 3;
  p.seq = 200;
  apply_framework(p);
  const auto leaf = [&] {
    const Ledger l = estimate(m, p);
    const LedgerItem* i = find_item(l, "activations.embedding_leaf");
    return i == nullptr ? std::int64_t{-1} : i->bytes;
  };
  EXPECT_EQ(leaf(), 307'200);
  p.precision = Precision::bf16;
  EXPECT_EQ(leaf(), 153'600);
  p.checkpointing = Checkpointing::none;
  EXPECT_EQ(leaf(), -1);
}

}  // namespace
}  // namespace trainmem

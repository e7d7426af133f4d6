// Issue 15's activation terms against hand-computed bytes: activation intermediates, dropout
// masks (CUDA bool mask, CPU noise), the parallel block, post-norms, eager soft-capping, the SDPA
// math kernel, fused-qkv views, and models without an adapter (docs/families.md).
#include <gtest/gtest.h>

#include <algorithm>

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

// A small decoder: h 64, 4 heads of 16 (MHA), I 256, vocab 1000, 2 layers.
ModelSpec small(const std::string& type) {
  ModelSpec s;
  s.model_type = type;
  s.vocab = 1000;
  s.hidden = 64;
  s.layers = 2;
  s.heads = 4;
  s.kv_heads = 4;
  s.head_dim = 16;
  s.intermediate = 256;
  s.max_positions = 512;
  return s;
}

TrainingPlan bf16_full() {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 1;
  p.seq = 64;
  return p;
}

TEST(FamilyActivation, SavedTensorsPerActivation) {
  EXPECT_EQ(activation_saved_tensors(Activation::silu), 1);
  EXPECT_EQ(activation_saved_tensors(Activation::gelu), 1);
  EXPECT_EQ(activation_saved_tensors(Activation::gelu_tanh), 1);
  EXPECT_EQ(activation_saved_tensors(Activation::relu), 1);
  EXPECT_EQ(activation_saved_tensors(Activation::quick_gelu), 2);
  EXPECT_EQ(activation_saved_tensors(Activation::gelu_new), 4);
  EXPECT_EQ(activation_saved_tensors(Activation::gelu_fast), 7);
  EXPECT_EQ(activation_saved_tensors(Activation::clamped_swiglu), 4);
}

TEST(FamilyActivation, DropoutMaskIsBoolOnCudaNoiseOnCpu) {
  ActivationSettings cuda;
  EXPECT_EQ(dropout_mask_bytes(cuda, 2), 1);
  EXPECT_EQ(dropout_mask_bytes(cuda, 4), 1);
  ActivationSettings cpu;
  cpu.cpu_kernels = true;
  EXPECT_EQ(dropout_mask_bytes(cpu, 2), 2);
  EXPECT_EQ(dropout_mask_bytes(cpu, 4), 4);
}

// Phi-like parallel block, one shared LayerNorm, gelu_new plain MLP, bf16, SDPA, layer 1 (input
// requires grad): LN 2h+8 = 136; q/k/v input 2h = 128 (also the fc1 input: shared, 0);
// q, k, v, out 4 x 2 x 64 = 512 + lse 4 x 4 = 16; gelu_new 4 x 2 x 256 = 2,048; fc2 input 512.
// 136 + 128 + 528 + 2,048 + 512 = 3,352 B/token.
TEST(FamilyActivation, ParallelBlockSharesTheNormOutput) {
  ModelSpec s = small("phi");
  s.norm = NormKind::layer_norm;
  s.parallel_block = true;
  s.parallel_norms = 1;
  s.mlp = MlpKind::plain;
  s.activation = Activation::gelu_new;
  s.qkv_bias = s.o_bias = s.mlp_bias = true;
  const LoadedModel m = model_from_spec(s, SourceKind::config_file, "test");
  const auto all = layers(m, bf16_full());
  EXPECT_EQ(terms_per_token(all[1]), 3'352);
  // A norm per branch (GPT-NeoX) and exact gelu: the second LayerNorm saves the layer input the
  // first already saves, so only its mean and rstd are new (8), + the MLP's own input 128, and
  // the activation keeps one tensor (512) instead of four: 3,352 + 136 - 1,536 = 1,952.
  s.parallel_norms = 2;
  s.activation = Activation::gelu;
  const auto neox = layers(model_from_spec(s, SourceKind::config_file, "test"), bf16_full());
  EXPECT_EQ(terms_per_token(neox[1]), 1'952);
}

// q made heads-major before a fused kernel (torch.cat in Phi's, Phi-3's and GPT-NeoX's rotary):
// the kernel's output is laid out like q, so the transpose back copies it and a trained o_proj
// saves that copy, 2h = 128 B/token in bf16; a frozen o_proj keeps nothing more.
TEST(FamilyActivation, HeadsMajorQueryCopiesTheOprojInput) {
  ModelSpec s = small("phi3");
  const auto plain =
      terms_per_token(layers(model_from_spec(s, SourceKind::config_file, "t"), bf16_full())[1]);
  s.q_heads_major = true;
  const LoadedModel major = model_from_spec(s, SourceKind::config_file, "t");
  EXPECT_EQ(terms_per_token(layers(major, bf16_full())[1]) - plain, 2 * 64);
  TrainingPlan frozen_o = bf16_full();
  frozen_o.method = Method::lora;
  frozen_o.lora.targets = {"q", "v"};
  s.q_heads_major = false;
  const auto lora_plain =
      terms_per_token(layers(model_from_spec(s, SourceKind::config_file, "t"), frozen_o)[1]);
  EXPECT_EQ(terms_per_token(layers(major, frozen_o)[1]), lora_plain);
}

// litgpt's LoRAQKVLinear: one lora_A of r per adapted q/k/v (the conv1d of lora_B saves its
// output; the common linear path priced r of it) and, unless all three are adapted, zero_pad's
// index_copy keeping lora_B's output in the fused width. bf16 adapters, r 8, h 64 (4 heads of
// 16, MHA): q and v adapted, A 2 x 8 x 1 = 16 B/token more and B 2 x (64 + 64) = 256; all three,
// A 2 x 8 x 2 = 32 and no zero_pad copy.
TEST(FamilyActivation, LitgptQkvLoraKeepsTheZeroPadSource) {
  const LoadedModel m = model_from_spec(small("llama"), SourceKind::config_file, "t");
  TrainingPlan p = bf16_full();
  p.method = Method::lora;
  p.lora.rank = 8;
  p.lora.targets = {"q", "v"};
  p.behaviour.fused_qkv_attention = true;
  p.behaviour.adapters_fp32 = false;
  auto bytes_of = [&](const std::string& what) {
    std::int64_t b = 0;
    const auto all = layers(m, p);  // a range-for over layers(...)[1] would outlive the vector
    for (const ActivationTerm& t : all[1]) {
      if (t.name.find(what) != std::string::npos) b += t.bytes_per_token;
    }
    return b;
  };
  EXPECT_EQ(bytes_of("zero_pad index_copy source"), 256);
  EXPECT_EQ(bytes_of("LoRA A output of the other adapted"), 16);
  p.lora.targets = {"q", "k", "v"};
  EXPECT_EQ(bytes_of("zero_pad index_copy source"), 0);
  EXPECT_EQ(bytes_of("LoRA A output of the other adapted"), 32);
  p.behaviour.fused_qkv_attention = false;  // PEFT: a LoraLayer per module, no zero_pad
  EXPECT_EQ(bytes_of("litgpt"), 0);
}

// litgpt expands k and v to every head and reshapes them: a copy under several groups, a view
// of the fused qkv output under one group (multi-query) and under multi-head, so SDPA's saved v
// keeps the whole output there. The small decoder (4 heads of 16, bf16): MHA 2 x (4 + 8) x 16 =
// 384 B/token; one group 2 x (4 + 2) x 16 = 192; two groups, v copied to 4 heads, 2 x 64 = 128.
TEST(FamilyActivation, LitgptValueViewKeepsTheQkvOutputUnlessGrouped) {
  auto v_bytes = [](std::int64_t kv_heads) {
    ModelSpec s = small("llama");
    s.kv_heads = kv_heads;
    const LoadedModel m = model_from_spec(s, SourceKind::config_file, "t");
    TrainingPlan p = bf16_full();
    p.behaviour.fused_qkv_attention = true;
    std::int64_t b = 0;
    const auto all = layers(m, p);
    for (const ActivationTerm& t : all[1]) {
      if (t.name.find("v view (litgpt)") != std::string::npos ||
          t.name.find("v expanded to every head (litgpt)") != std::string::npos) {
        b += t.bytes_per_token;
      }
    }
    return b;
  };
  EXPECT_EQ(v_bytes(4), 2 * (4 + 8) * 16);
  EXPECT_EQ(v_bytes(1), 2 * (4 + 2) * 16);
  EXPECT_EQ(v_bytes(2), 2 * 4 * 16);
}

// A LoRA adapter on the lm_head saves what a layer linear's does: on the small decoder (h 64) in
// bf16 with PEFT's fp32 adapters at r 8, the input cast to fp32 (4 x 64 = 256 B/token) and
// lora_A's fp32 output (4 x 8 = 32); with dropout the dropped fp32 copy instead of the cast and
// its bool mask (64). Measured with litgpt's Phi and Gemma heads (docs/accuracy.md, ninth pass).
TEST(FamilyActivation, AdaptedHeadSavesItsLoraInputs) {
  const ModelSpec spec = small("llama");
  TrainingPlan p = bf16_full();
  p.method = Method::lora;
  p.lora.rank = 8;
  ActivationSettings cfg = activation_settings(p);
  auto head_bytes = [&](bool adapted) {
    return terms_per_token(final_terms(spec, true, false, false, cfg, adapted));
  };
  EXPECT_EQ(head_bytes(true) - head_bytes(false), 256 + 32);
  cfg.lora_dropout = 0.1;
  EXPECT_EQ(head_bytes(true) - head_bytes(false), 64 + 256 + 32);
}

// Falcon hands SDPA its materialised causal mask (create_causal_mask(allow_is_causal_skip=
// False)): every layer keeps the float bias SDPA converts it to, 2 B per (query, key) pair in
// bf16, where a model that lets SDPA run is_causal keeps none.
TEST(FamilyActivation, FalconKeepsTheCausalMaskPerLayer) {
  const LoadedModel falcon = testing_support::validation_model("falcon-tiny");
  EXPECT_TRUE(falcon.spec.sdpa_mask_always);
  auto pair_bytes = [](const LoadedModel& m) {
    std::int64_t pair = 0;
    const auto all = layers(m, bf16_full());
    for (const ActivationTerm& t : all[1]) pair += t.bytes_per_pair;
    return pair;
  };
  EXPECT_EQ(pair_bytes(falcon), 2);
  ModelSpec s = falcon.spec;
  s.sdpa_mask_always = false;
  EXPECT_EQ(pair_bytes(model_from_spec(s, SourceKind::config_file, "t")), 0);
}

// OLMo-2-like post-norm layer, full-width q/k norms, fp32 weight mul, silu gated MLP (I 128):
// q/k/v read the layer input 128; q_norm, k_norm each 4h+4 + 4h = 516; attention 528;
// post_attention_layernorm 516; gate/up input 128 + silu input 256 + act 256 + up 256 + down
// input 256 = 1,152; post_feedforward_layernorm 516. Total 3,872 B/token.
TEST(FamilyActivation, PostNormLayer) {
  ModelSpec s = small("olmo2");
  s.intermediate = 128;
  s.norm = NormKind::rms_norm_fp32;
  s.norm_placement = NormPlacement::post;
  s.qk_norm = QkNorm::full_width;
  const auto all = layers(model_from_spec(s, SourceKind::config_file, "test"), bf16_full());
  EXPECT_EQ(terms_per_token(all[1]), 3'872);
}

// GPT-2's eager attention: softmax in bf16 (2), dropout mask (CUDA 1, CPU noise 2), dropped
// probabilities (2): 5 B/score on CUDA, 6 on CPU. Under autocast the softmax runs in fp32 (4):
// 7 on CUDA, 8 on CPU.
TEST(FamilyActivation, Gpt2EagerDropoutScores) {
  const LoadedModel m = testing_support::validation_model("gpt2-tiny");
  TrainingPlan p = bf16_full();
  p.attention = Attention::eager;
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 5);
  p.cpu_kernels = true;
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 6);
  p.precision = Precision::autocast_bf16;
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 8);
  p.cpu_kernels = false;
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 7);
}

// SDPA with attention dropout: CUDA runs a fused kernel (no scores kept); the CPU flash kernel
// rejects dropout, so math keeps fp32 softmax, fp32 noise and fp32 dropped probabilities (12 B).
TEST(FamilyActivation, SdpaDropoutRunsMathOnCpu) {
  const LoadedModel m = testing_support::validation_model("gpt2-tiny");
  TrainingPlan p = bf16_full();
  ActivationSettings cfg = activation_settings(p);
  EXPECT_EQ(attention_kernel(m.spec, cfg), AttentionKernel::fused);
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 0);
  p.cpu_kernels = true;
  cfg = activation_settings(p);
  EXPECT_EQ(attention_kernel(m.spec, cfg), AttentionKernel::math);
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 12);
}

// Gemma 2 runs eager even when SDPA is asked for (_supports_sdpa = False); the attention
// soft-cap's tanh keeps 2 B/score on top of fp32 softmax (4) and its bf16 copy (2).
TEST(FamilyActivation, Gemma2SoftcapEagerScores) {
  const LoadedModel m = testing_support::load_or_fail("gemma-2-9b");
  TrainingPlan p = bf16_full();
  EXPECT_EQ(attention_kernel(m.spec, activation_settings(p)), AttentionKernel::eager);
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 8);
  // Asked for FlashAttention-2 (_supports_flash_attn_2 = True), it runs the fused kernel, the
  // soft-cap in-kernel: no per-score bytes.
  p.attention = Attention::flash;
  EXPECT_EQ(attention_kernel(m.spec, activation_settings(p)), AttentionKernel::fused);
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 0);
}

// gpt-oss (a config shaped like gpt-oss-20b, shrunk: h 64, 4 heads of 16, 2 KV heads, 8 experts
// of 32, top-2). Asked for sdpa it runs eager (_supports_sdpa = False) with the softmax in bf16:
// 2 B/score, plus per token and head the sink column (2 B) and max's int64 index (8 B). The
// router keeps the top-k indices (8 B) and the bf16 softmax over the k logits (2 B) per routed
// copy. The clamped gate keeps 7 widths per routed copy where SwiGLU keeps 4. The norms' weight
// mul runs in fp32.
TEST(FamilyActivation, GptOssSinksRouterAndClampedGate) {
  auto m = model_from_config_text(
      R"({"model_type": "gpt_oss", "vocab_size": 1000, "hidden_size": 64,
          "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 8,
          "num_experts_per_tok": 2, "sliding_window": 128,
          "layer_types": ["sliding_attention", "full_attention"]})",
      "gpt-oss-small");
  ASSERT_TRUE(m.ok()) << m.error().message();
  TrainingPlan p = bf16_full();
  EXPECT_EQ(attention_kernel(m->spec, activation_settings(p)), AttentionKernel::eager);
  const auto terms = layers(*m, p);
  EXPECT_EQ(terms_per_score(terms[1]), 2);
  auto bytes_of = [&](const std::string& label) {
    std::int64_t b = 0;
    for (const ActivationTerm& t : terms[1]) {
      if (t.name == label) b += t.bytes_per_token;
    }
    return b;
  };
  EXPECT_EQ(bytes_of("eager: the sink column of the softmax output"), 2 * 4);
  EXPECT_EQ(bytes_of("eager: row max indices, int64"), 8 * 4);
  EXPECT_EQ(bytes_of("router: top-k indices and the softmax over the top-k logits"), (8 + 2) * 2);
  // gate and up halves, the clamped gate and its sigmoid: 4 x 2 copies x 2 B x 32.
  EXPECT_EQ(bytes_of("experts: activation intermediates of the gate output"), 4 * 2 * 2 * 32);
  // GptOssRMSNorm multiplies the weight in fp32: the weight mul keeps the fp32 normalized tensor
  // (4 B x 64), twice a layer.
  EXPECT_EQ(bytes_of("input_layernorm: normalized tensor (weight mul)"), 4 * 64);
  EXPECT_EQ(bytes_of("post_attention_layernorm: normalized tensor (weight mul)"), 4 * 64);
  // The same model with SwiGLU experts keeps one width there instead of four.
  ModelSpec swiglu = m->spec;
  swiglu.activation = Activation::silu;
  EXPECT_LT(terms_per_token(layer_terms(swiglu, layer_plans(swiglu, apply_method(*m, p), p)[1],
                                        activation_settings(p))),
            terms_per_token(terms[1]));
}

// Falcon-7B's multi-query K/V reach SDPA with one head and no enable_gqa: the math kernel keeps
// the fp32 softmax output (4 B/score), on CUDA as on CPU.
TEST(FamilyActivation, FalconMultiQueryRunsMath) {
  const LoadedModel m = testing_support::load_or_fail("falcon-7b");
  TrainingPlan p = bf16_full();
  EXPECT_EQ(attention_kernel(m.spec, activation_settings(p)), AttentionKernel::math);
  EXPECT_EQ(terms_per_score(layers(m, p)[0]), 4);
}

// GPT-NeoX's v is a view of query_key_value's output: the saved v keeps all 3h of it, so the
// attention keeps q 2h + k 2h + 6h instead of 6h in all (SDPA, and eager at batch 1).
TEST(FamilyActivation, FusedQkvViewKeepsTheWholeOutput) {
  ModelSpec s = small("gpt_neox");
  s.fused_qkv = true;
  s.fused_mlp = false;
  s.mlp = MlpKind::plain;
  s.norm = NormKind::layer_norm;
  const auto plain =
      terms_per_token(layers(model_from_spec(s, SourceKind::config_file, "t"), bf16_full())[1]);
  s.fused_qkv_view = true;
  const auto view =
      terms_per_token(layers(model_from_spec(s, SourceKind::config_file, "t"), bf16_full())[1]);
  EXPECT_EQ(view - plain, 2 * 2 * 64);  // (a + 2kv)d - kv d = (a + kv) d more, in bf16
  // Eager's bmm reshapes v to (batch x heads, T, d): a view of the fused output only at batch 1;
  // past it the reshape copies v (kv d in bf16) and the fused output is not kept.
  TrainingPlan eager = bf16_full();
  eager.attention = Attention::eager;
  const LoadedModel viewed = model_from_spec(s, SourceKind::config_file, "t");
  s.fused_qkv_view = false;
  const LoadedModel copied = model_from_spec(s, SourceKind::config_file, "t");
  EXPECT_EQ(terms_per_token(layers(viewed, eager)[1]) - terms_per_token(layers(copied, eager)[1]),
            2 * 2 * 64);
  eager.batch = 2;
  EXPECT_EQ(terms_per_token(layers(viewed, eager)[1]), terms_per_token(layers(copied, eager)[1]));
}

// A sliding window shorter than the sequence materialises a mask: SDPA keeps a float copy per
// (query, key) pair and K/V repeated to all heads; at or below the window nothing changes.
TEST(FamilyActivation, SlidingWindowMaskBeyondTheWindow) {
  ModelSpec s = small("mistral");
  s.kv_heads = 2;
  s.sliding_window = 64;
  const LoadedModel m = model_from_spec(s, SourceKind::config_file, "t");
  TrainingPlan p = bf16_full();
  p.seq = 64;
  const auto inside = layers(m, p)[1];
  p.seq = 128;
  const auto beyond = layers(m, p)[1];
  // K and V from 2 to 4 heads: 2 x 2 x 2 x 16 = 128 B/token more; 2 B per pair for the mask.
  EXPECT_EQ(terms_per_token(beyond) - terms_per_token(inside), 128);
  std::int64_t pair = 0;
  for (const ActivationTerm& t : beyond) pair += t.bytes_per_pair;
  EXPECT_EQ(pair, 2);
}

// Embedding dropout keeps a bool mask per hidden element when the embeddings train.
TEST(FamilyActivation, EmbeddingDropoutLedgerLine) {
  const LoadedModel m = testing_support::load_or_fail("gpt2");
  const TrainingPlan p = bf16_full();
  const Ledger ledger = estimate(m, p);
  const auto it = std::find_if(ledger.items.begin(), ledger.items.end(), [](const LedgerItem& i) {
    return i.label == "Embedding dropout mask";
  });
  ASSERT_NE(it, ledger.items.end());
  EXPECT_EQ(it->bytes, 64 * 768);  // 64 tokens x 768 hidden x 1 B
}

// A model_type with no adapter: standard keys as a Llama layer, weights exact, activations
// marked estimated in a note and on the ledger line.
TEST(FamilyActivation, UnknownFamilyIsPricedAndMarkedEstimated) {
  auto spec = spec_from_config_text(
      R"({"model_type": "newdecoder", "vocab_size": 1000, "hidden_size": 64,
          "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4})",
      "new.json");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_NE(spec->estimated_from.find("llama"), std::string::npos);
  const LoadedModel m = model_from_spec(spec.value(), SourceKind::config_file, "new.json");
  // 2 x (4 x 64^2 + 3 x 64 x 128 + 2 x 64) + 2 x 1000 x 64 + 64 = 210,240.
  EXPECT_EQ(params_total(m.inventory), 210'240);
  const Ledger ledger = estimate(m, bf16_full());
  const bool noted = std::any_of(ledger.notes.begin(), ledger.notes.end(), [](const auto& n) {
    return n.find("ESTIMATED") != std::string::npos && n.find("llama") != std::string::npos;
  });
  EXPECT_TRUE(noted);
  const bool marked = std::any_of(ledger.items.begin(), ledger.items.end(), [](const auto& i) {
    return i.label.find("(estimated: llama") != std::string::npos && i.estimated;
  });
  EXPECT_TRUE(marked);
}

}  // namespace
}  // namespace trainmem

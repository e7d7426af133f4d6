// Bad config input: one test per case. Each error names the file, the field and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

Error config_error(const std::string& text) {
  auto spec = spec_from_config_text(text, "cfg.json");
  EXPECT_FALSE(spec.ok()) << text;
  return spec.ok() ? Error{} : spec.error();
}

const char* kLlama = R"({"model_type": "llama", "vocab_size": 1000, "hidden_size": 64,
  "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2)";

std::string llama_with(const std::string& extra) {
  return std::string(kLlama) + extra + "}";
}

TEST(ConfigErrors, ValidBaselineParses) {
  auto spec = spec_from_config_text(llama_with(""), "cfg.json");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->head_dim, 16);
}

TEST(ConfigErrors, MalformedJsonNamesTheFile) {
  const Error e = config_error(R"({"model_type": "llama", )");
  EXPECT_EQ(e.file, "cfg.json");
  EXPECT_NE(e.reason.find("not valid JSON"), std::string::npos);
}

TEST(ConfigErrors, NotAnObject) {
  EXPECT_EQ(config_error("[1, 2]").reason, "must be a JSON object");
}

TEST(ConfigErrors, MissingModelType) {
  EXPECT_EQ(config_error(R"({"hidden_size": 64})").field, "model_type");
}

// A model_type without an adapter is read through the standard keys (issue 15); a config that
// lacks them still fails, naming the key and listing the families with adapters.
TEST(ConfigErrors, UnknownModelTypeWithoutStandardKeysNamesTheKey) {
  const Error e = config_error(R"({"model_type": "nanogpt_custom"})");
  EXPECT_EQ(e.field, "vocab_size");
  EXPECT_NE(e.reason.find("no adapter"), std::string::npos);
  EXPECT_NE(e.reason.find("qwen3"), std::string::npos);
}

// Families the generic Llama layer would misprice are refused for what they are: an encoder
// (BERT: 110M params, priced as a Llama decoder 160M), a Mamba hybrid (Jamba: 52B, priced 92B),
// a state-space model, or a config whose layer_types name non-attention layers.
TEST(ConfigErrors, EncodersAndNonAttentionLayersAreRefusedNotEstimated) {
  const std::string shape =
      R"("vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
         "num_attention_heads": 12, "intermediate_size": 3072)";
  const Error bert = config_error(R"({"model_type": "bert", )" + shape + "}");
  EXPECT_EQ(bert.field, "model_type");
  EXPECT_NE(bert.reason.find("encoder"), std::string::npos) << bert.reason;
  const Error masked = config_error(
      R"({"model_type": "my_encoder", "architectures": ["MyEncoderForMaskedLM"], )" + shape + "}");
  EXPECT_NE(masked.reason.find("encoder"), std::string::npos) << masked.reason;
  const Error jamba =
      config_error(R"({"model_type": "jamba", "attn_layer_period": 8, )" + shape + "}");
  EXPECT_EQ(jamba.field, "model_type");
  EXPECT_NE(jamba.reason.find("not attention"), std::string::npos) << jamba.reason;
  EXPECT_EQ(config_error(R"({"model_type": "mamba"})").field, "model_type");
  const Error hybrid = config_error(
      R"({"model_type": "new_hybrid", "layer_types": ["full_attention", "mamba"], )" + shape + "}");
  EXPECT_NE(hybrid.reason.find("layer_types: mamba"), std::string::npos) << hybrid.reason;
  // layer_types of attention kinds alone are a decoder's (Gemma 3, Qwen3's sliding layers).
  std::string twelve;
  for (int i = 0; i < 12; ++i) {
    twelve += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
  }
  EXPECT_TRUE(spec_from_config_text(R"({"model_type": "new_decoder", "layer_types": [)" + twelve +
                                        "], " + shape + "}",
                                    "config.json")
                  .ok());
}

// Qwen2.5-VL keeps the language model's keys at the top level beside vision_config: the vision
// tower (676,550,144 parameters for the 7B) is not priced, and the report must say so.
TEST(ConfigErrors, TopLevelVisionConfigIsNamedAsNotPriced) {
  auto spec = spec_from_config_text(
      R"({"model_type": "qwen2_5_vl", "vocab_size": 152064, "hidden_size": 3584,
          "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
          "intermediate_size": 18944, "vision_config": {"depth": 32}})",
      "config.json");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_EQ(spec->unpriced_parts.size(), 1u);
  EXPECT_EQ(spec->unpriced_parts[0], "vision_config");
}

// MoE layouts the generic (Mixtral) layer cannot describe are refused naming the key: Llama 4's
// shared expert (intermediate_size_mlp), shared experts, leading dense layers; the values that
// keep Mixtral's layout are accepted. Qwen3-MoE's dense layers by index are refused as
// Qwen2-MoE's are (Qwen3-30B-A3B with layers 0-3 dense would be priced 2.3B too high).
TEST(ConfigErrors, MoeLayoutsTheGenericLayerCannotPriceAreRefused) {
  const std::string moe =
      R"("vocab_size": 32000, "hidden_size": 1024, "num_hidden_layers": 4,
         "num_attention_heads": 8, "intermediate_size": 2048, "num_local_experts": 8,
         "num_experts_per_tok": 2)";
  EXPECT_EQ(config_error(R"({"model_type": "new_moe", "n_shared_experts": 2, )" + moe + "}").field,
            "n_shared_experts");
  EXPECT_EQ(
      config_error(R"({"model_type": "new_moe", "first_k_dense_replace": 1, )" + moe + "}").field,
      "first_k_dense_replace");
  EXPECT_TRUE(spec_from_config_text(
                  R"({"model_type": "new_moe", "decoder_sparse_step": 1, "n_shared_experts": 0, )" +
                      moe + "}",
                  "cfg.json")
                  .ok());
  const Error qwen3 = config_error(
      R"({"model_type": "qwen3_moe", "num_hidden_layers": 48, "mlp_only_layers": [0, 1, 2, 3]})");
  EXPECT_EQ(qwen3.field, "mlp_only_layers");
}

// layer_types has one known kind per layer (transformers configuration_utils.py
// layer_type_validation); a short list priced the rest as full attention.
TEST(ConfigErrors, LayerTypesNeedOneKnownKindPerLayer) {
  const Error short_list = config_error(
      R"({"model_type": "qwen3", "num_hidden_layers": 2, "layer_types": ["sliding_attention"]})");
  EXPECT_EQ(short_list.field, "layer_types");
  EXPECT_NE(short_list.reason.find("has 1 entries, but num_hidden_layers is 2"), std::string::npos)
      << short_list.reason;
  const Error unknown = config_error(
      R"({"model_type": "qwen3", "num_hidden_layers": 2, "layer_types": ["bogus", "bogus"]})");
  EXPECT_NE(unknown.reason.find("'bogus' is not a layer kind"), std::string::npos)
      << unknown.reason;
  const Error null_width = config_error(R"({"model_type": "llama", "num_hidden_layers": 2,
      "hidden_size": null})");
  EXPECT_EQ(null_width.field, "hidden_size");
}

// A Gemma 3 config written before layer_types: sliding_window_pattern 6 makes every sixth layer
// full attention (configuration_gemma3.py), not every layer sliding.
TEST(ConfigReading, SlidingWindowPatternMakesEveryNthLayerFull) {
  auto spec = spec_from_config_text(
      R"({"model_type": "gemma3_text", "num_hidden_layers": 12, "sliding_window": 512,
          "sliding_window_pattern": 6})",
      "config.json");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  const std::vector<bool> expected{true, true, true, true, true, false,
                                   true, true, true, true, true, false};
  EXPECT_EQ(spec->sliding_layers, expected);
}

// InternLM2's remote code picks its attention class from config.json's attn_implementation
// ("eager" in its published configs): a plan pricing sdpa gets a note naming the difference
// (eager holds every score matrix: Llama-shaped 7B LoRA at 4,096 tokens, 55 vs 152 GiB).
TEST(ConfigReading, ConfigNamedEagerAttentionIsANote) {
  auto m = model_from_config_text(
      R"({"model_type": "internlm2", "vocab_size": 92544, "hidden_size": 4096,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
          "intermediate_size": 14336, "attn_implementation": "eager"})",
      "internlm2");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->spec.config_attention, "eager");
  TrainingPlan sdpa;
  const auto notes = plan_notes(*m, sdpa, nullptr);
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n.find("attn_implementation \"eager\"") != std::string::npos;
  }));
  TrainingPlan eager;
  eager.attention = Attention::eager;
  for (const std::string& n : plan_notes(*m, eager, nullptr)) {
    EXPECT_EQ(n.find("attn_implementation"), std::string::npos) << n;
  }
}

TEST(ConfigErrors, EncoderDecoderIsRefused) {
  const Error e = config_error(R"({"model_type": "t5", "is_encoder_decoder": true})");
  EXPECT_EQ(e.field, "is_encoder_decoder");
}

TEST(ConfigErrors, UnknownActivationIsNamed) {
  const Error e = config_error(llama_with(R"(, "hidden_act": "swiglu_squared")"));
  EXPECT_EQ(e.field, "hidden_act");
  EXPECT_NE(e.reason.find("swiglu_squared"), std::string::npos);
}

TEST(ConfigErrors, DropoutMustBeAProbability) {
  const Error e = config_error(llama_with(R"(, "attention_dropout": 1.5)"));
  EXPECT_EQ(e.field, "attention_dropout");
  EXPECT_NE(e.reason.find("probability"), std::string::npos);
  EXPECT_EQ(config_error(R"({"model_type": "gpt2", "n_layer": 2, "resid_pdrop": -0.1})").field,
            "resid_pdrop");
}

TEST(ConfigErrors, FalconAlibiIsNotModelled) {
  EXPECT_EQ(config_error(R"({"model_type": "falcon", "alibi": true})").field, "alibi");
  EXPECT_EQ(config_error(R"({"model_type": "falcon", "new_decoder_architecture": true,
                       "num_ln_in_parallel_attn": 3})")
                .field,
            "num_ln_in_parallel_attn");
}

TEST(ConfigErrors, DeepseekV2MoeLayerFrequency) {
  EXPECT_EQ(
      config_error(R"({"model_type": "deepseek_v2", "num_hidden_layers": 4, "moe_layer_freq": 2})")
          .field,
      "moe_layer_freq");
}

TEST(ConfigErrors, Qwen2MoeDenseLayerList) {
  EXPECT_EQ(config_error(
                R"({"model_type": "qwen2_moe", "num_hidden_layers": 4, "mlp_only_layers": [0, 3]})")
                .field,
            "mlp_only_layers");
}

TEST(ConfigErrors, LayerTypesMustBeStrings) {
  EXPECT_EQ(config_error(llama_with(R"(, "layer_types": [1, 2])")).field, "layer_types");
}

TEST(ConfigErrors, GptNeoxHeadsMustDivideHidden) {
  EXPECT_EQ(config_error(R"({"model_type": "gpt_neox", "num_hidden_layers": 2, "hidden_size": 100,
                             "num_attention_heads": 3})")
                .field,
            "num_attention_heads");
}

TEST(ConfigErrors, ZeroLayers) {
  const Error e = config_error(R"({"model_type": "llama", "num_hidden_layers": 0})");
  EXPECT_EQ(e.field, "num_hidden_layers");
  EXPECT_NE(e.reason.find("positive"), std::string::npos);
}

TEST(ConfigErrors, NegativeHidden) {
  EXPECT_EQ(config_error(R"({"model_type": "qwen3", "hidden_size": -5})").field, "hidden_size");
}

TEST(ConfigErrors, WrongTypeForCount) {
  EXPECT_EQ(config_error(R"({"model_type": "llama", "vocab_size": "many"})").field, "vocab_size");
}

TEST(ConfigErrors, HugeDimensionRejectedBeforeOverflow) {
  EXPECT_EQ(config_error(R"({"model_type": "llama", "hidden_size": 9223372036854775807})").field,
            "hidden_size");
}

TEST(ConfigErrors, HeadsMustDivideHiddenWithoutHeadDim) {
  const Error e =
      config_error(R"({"num_hidden_layers": 2, "model_type": "llama", "hidden_size": 100,
      "num_attention_heads": 3, "num_key_value_heads": 3})");
  EXPECT_EQ(e.field, "num_attention_heads");
}

TEST(ConfigErrors, KvHeadsMustDivideHeads) {
  const Error e =
      config_error(R"({"num_hidden_layers": 2, "model_type": "llama", "num_attention_heads": 32,
      "num_key_value_heads": 5})");
  EXPECT_EQ(e.field, "num_key_value_heads");
}

TEST(ConfigErrors, TopKAboveExperts) {
  const Error e =
      config_error(R"({"num_hidden_layers": 2, "model_type": "mixtral", "num_local_experts": 4,
      "num_experts_per_tok": 8})");
  EXPECT_EQ(e.field, "num_experts_per_tok");
}

TEST(ConfigErrors, MissingLayerCountIsAnErrorNotTheClassDefault) {
  // LlamaConfig would default to 32 layers; a file without the key prices no model.
  const Error e = config_error(R"({"model_type": "llama", "hidden_size": 64})");
  EXPECT_EQ(e.field, "num_hidden_layers");
  EXPECT_NE(e.reason.find("is missing"), std::string::npos) << e.reason;
}

TEST(ConfigErrors, FlagWithWrongType) {
  EXPECT_EQ(config_error(llama_with(R"(, "tie_word_embeddings": "yes")")).field,
            "tie_word_embeddings");
}

TEST(ConfigErrors, NestedTextConfigIsRead) {
  auto spec = spec_from_config_text(R"({"model_type": "gemma3", "text_config": {
      "hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 34}})",
                                    "cfg.json");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->model_type, "gemma3_text");
  EXPECT_EQ(spec->vocab, 262208);  // Gemma3TextConfig default
  EXPECT_EQ(spec->head_dim, 256);
  EXPECT_TRUE(spec->tied_embeddings);
}

TEST(ConfigErrors, MissingFileNamesThePath) {
  auto model = load_model("/nonexistent/dir/config.json");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().file, "/nonexistent/dir/config.json");
}

TEST(ConfigErrors, EmptyFolder) {
  const auto dir = std::filesystem::temp_directory_path() / "trainmem_empty_folder_test";
  std::filesystem::create_directories(dir);
  auto model = load_model(dir.string());
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().reason.find("neither config.json"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ConfigErrors, OversizedConfigRefused) {
  const auto path = std::filesystem::temp_directory_path() / "trainmem_oversized_config.json";
  {
    std::ofstream out(path);
    out << std::string(17 << 20, ' ');
  }
  auto model = load_model(path.string());
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().reason.find("far smaller"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(ConfigErrors, UnknownPresetSuggestsNearest) {
  auto model = load_model("qwen3-8");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::not_found);
  EXPECT_NE(model.error().reason.find("qwen3-8b"), std::string::npos);
}

TEST(ConfigErrors, PresetByHfIdIsCaseInsensitive) {
  auto model = load_model("qwen/QWEN3-8B");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model->spec.name, "Qwen/Qwen3-8B");
}

}  // namespace
}  // namespace trainmem

// Bad config input: one test per case. Each error names the file, the field and the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "trainmem/model.h"

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
  const Error e = config_error(R"({"model_type": "mamba"})");
  EXPECT_EQ(e.field, "vocab_size");
  EXPECT_NE(e.reason.find("no adapter"), std::string::npos);
  EXPECT_NE(e.reason.find("qwen3"), std::string::npos);
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
  EXPECT_EQ(config_error(R"({"model_type": "gpt2", "resid_pdrop": -0.1})").field, "resid_pdrop");
}

TEST(ConfigErrors, FalconAlibiIsNotModelled) {
  EXPECT_EQ(config_error(R"({"model_type": "falcon", "alibi": true})").field, "alibi");
  EXPECT_EQ(config_error(R"({"model_type": "falcon", "new_decoder_architecture": true,
                       "num_ln_in_parallel_attn": 3})")
                .field,
            "num_ln_in_parallel_attn");
}

TEST(ConfigErrors, DeepseekV2MoeLayerFrequency) {
  EXPECT_EQ(config_error(R"({"model_type": "deepseek_v2", "moe_layer_freq": 2})").field,
            "moe_layer_freq");
}

TEST(ConfigErrors, Qwen2MoeDenseLayerList) {
  EXPECT_EQ(config_error(R"({"model_type": "qwen2_moe", "mlp_only_layers": [0, 3]})").field,
            "mlp_only_layers");
}

TEST(ConfigErrors, LayerTypesMustBeStrings) {
  EXPECT_EQ(config_error(llama_with(R"(, "layer_types": [1, 2])")).field, "layer_types");
}

TEST(ConfigErrors, GptNeoxHeadsMustDivideHidden) {
  EXPECT_EQ(config_error(R"({"model_type": "gpt_neox", "hidden_size": 100,
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
  const Error e = config_error(R"({"model_type": "llama", "hidden_size": 100,
      "num_attention_heads": 3, "num_key_value_heads": 3})");
  EXPECT_EQ(e.field, "num_attention_heads");
}

TEST(ConfigErrors, KvHeadsMustDivideHeads) {
  const Error e = config_error(R"({"model_type": "llama", "num_attention_heads": 32,
      "num_key_value_heads": 5})");
  EXPECT_EQ(e.field, "num_key_value_heads");
}

TEST(ConfigErrors, TopKAboveExperts) {
  const Error e = config_error(R"({"model_type": "mixtral", "num_local_experts": 4,
      "num_experts_per_tok": 8})");
  EXPECT_EQ(e.field, "num_experts_per_tok");
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

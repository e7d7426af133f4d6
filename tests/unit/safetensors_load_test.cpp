// load_model() on a safetensors folder and on an HF cache id: the architecture comes from
// config.json, the inventory from the headers, and the source says which.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "support/safetensors_writer.h"
#include "trainmem/model.h"

namespace trainmem::io {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnv;
using testing::st_file_bytes;
using testing::StEntry;
using testing::TempDir;
using testing::write_bytes;

constexpr const char* kConfig = R"({
  "model_type": "llama", "architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16",
  "vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "head_dim": 4, "intermediate_size": 24,
  "max_position_embeddings": 128, "tie_word_embeddings": false
})";

std::vector<StEntry> tiny_llama_tensors() {
  std::vector<StEntry> e = {{"model.embed_tokens.weight", "BF16", {64, 16}},
                            {"model.norm.weight", "BF16", {16}},
                            {"lm_head.weight", "BF16", {64, 16}}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    e.insert(e.end(), {{p + "input_layernorm.weight", "BF16", {16}},
                       {p + "post_attention_layernorm.weight", "BF16", {16}},
                       {p + "self_attn.q_proj.weight", "BF16", {16, 16}},
                       {p + "self_attn.k_proj.weight", "BF16", {8, 16}},
                       {p + "self_attn.v_proj.weight", "BF16", {8, 16}},
                       {p + "self_attn.o_proj.weight", "BF16", {16, 16}},
                       {p + "mlp.gate_proj.weight", "BF16", {24, 16}},
                       {p + "mlp.up_proj.weight", "BF16", {24, 16}},
                       {p + "mlp.down_proj.weight", "BF16", {16, 24}}});
  }
  return e;
}

void write_model(const fs::path& dir, bool with_weights = true) {
  write_bytes(dir / "config.json", kConfig);
  if (with_weights) write_bytes(dir / "model.safetensors", st_file_bytes(tiny_llama_tensors()));
}

TEST(SafetensorsLoad, FolderWithConfigAndWeights) {
  TempDir dir;
  write_model(dir.path());
  const auto model = load_safetensors_model(dir.path(), SourceKind::safetensors);
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model->source, SourceKind::safetensors);
  EXPECT_EQ(model->spec.layers, 2);
  EXPECT_EQ(params_total(model->inventory), params_total(inventory(model->spec)));
}

TEST(SafetensorsLoad, FolderWithoutConfig) {
  TempDir dir;
  write_bytes(dir.path() / "model.safetensors", st_file_bytes(tiny_llama_tensors()));
  const auto model = load_safetensors_model(dir.path(), SourceKind::safetensors);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message().find("config.json"), std::string::npos);
}

TEST(SafetensorsLoad, LoadModelReadsHeadersOfAFolder) {
  TempDir dir;
  write_model(dir.path());
  // Headers that disagree with the config win: drop layer 1's MLP from the checkpoint.
  auto tensors = tiny_llama_tensors();
  std::erase_if(tensors,
                [](const StEntry& e) { return e.name.find("1.mlp.") != std::string::npos; });
  write_bytes(dir.path() / "model.safetensors", st_file_bytes(tensors));
  const auto model = load_model(dir.path().string());
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model->source, SourceKind::safetensors);
  EXPECT_EQ(params_total(model->inventory), params_total(inventory(model->spec)) - 3 * 24 * 16);
}

class SafetensorsLoadCache : public ::testing::Test {
 protected:
  SafetensorsLoadCache() {
    for (const char* name : {"HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME"}) {
      env_.push_back(std::make_unique<ScopedEnv>(name, nullptr));
    }
    env_.push_back(std::make_unique<ScopedEnv>("HF_HUB_CACHE", dir_.path().c_str()));
  }
  fs::path snapshot(const std::string& folder) {
    const fs::path s = dir_.path() / folder / "snapshots" / "0123abcd";
    fs::create_directories(s);
    return s;
  }
  TempDir dir_;
  std::vector<std::unique_ptr<ScopedEnv>> env_;
};

TEST_F(SafetensorsLoadCache, CachedIdWithWeights) {
  write_model(snapshot("models--tiny-org--tiny-llama"));
  const auto model = load_model("tiny-org/tiny-llama");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model->source, SourceKind::hf_cache);
  EXPECT_EQ(model->spec.name, "tiny-org/tiny-llama");
  EXPECT_EQ(params_total(model->inventory), params_total(inventory(model->spec)));
}

TEST_F(SafetensorsLoadCache, CachedIdWithConfigOnly) {
  write_model(snapshot("models--tiny-org--config-only"), /*with_weights=*/false);
  const auto model = load_model("tiny-org/config-only@0123abcd");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model->source, SourceKind::hf_cache);
  EXPECT_EQ(model->spec.name, "tiny-org/config-only");
}

TEST_F(SafetensorsLoadCache, CacheCanBeSwitchedOff) {
  write_model(snapshot("models--tiny-org--tiny-llama"));
  const auto model = load_model("tiny-org/tiny-llama", LoadOptions{.use_hf_cache = false});
  EXPECT_FALSE(model.ok() && model->source == SourceKind::hf_cache);
}

}  // namespace
}  // namespace trainmem::io

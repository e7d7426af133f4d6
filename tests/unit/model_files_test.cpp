// load_model_files(): a model folder given as file contents (the web page's dropped folder) loads
// exactly as load_model() loads the same folder from disk, and reports the same errors.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "support/safetensors_writer.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

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

std::vector<StEntry> layer_tensors(int l) {
  const std::string p = "model.layers." + std::to_string(l) + ".";
  return {{p + "input_layernorm.weight", "BF16", {16}},
          {p + "post_attention_layernorm.weight", "BF16", {16}},
          {p + "self_attn.q_proj.weight", "BF16", {16, 16}},
          {p + "self_attn.k_proj.weight", "BF16", {8, 16}},
          {p + "self_attn.v_proj.weight", "BF16", {8, 16}},
          {p + "self_attn.o_proj.weight", "BF16", {16, 16}},
          {p + "mlp.gate_proj.weight", "BF16", {24, 16}},
          {p + "mlp.up_proj.weight", "BF16", {24, 16}},
          {p + "mlp.down_proj.weight", "BF16", {16, 24}}};
}

// Two shards: embeddings and layer 0 in the first, layer 1, norm and lm_head in the second.
std::vector<StEntry> shard(int i) {
  std::vector<StEntry> e = layer_tensors(i);
  if (i == 0) e.push_back({"model.embed_tokens.weight", "BF16", {64, 16}});
  if (i == 1) {
    e.push_back({"model.norm.weight", "BF16", {16}});
    e.push_back({"lm_head.weight", "BF16", {64, 16}});
  }
  return e;
}

std::string index_json(bool drop_last = false) {
  std::string map;
  for (int i = 0; i < 2; ++i) {
    for (const StEntry& e : shard(i)) {
      if (drop_last && i == 1 && e.name == "lm_head.weight") continue;
      map += (map.empty() ? "\"" : ",\"") + e.name + "\":\"model-0000" + std::to_string(i + 1) +
             "-of-00002.safetensors\"";
    }
  }
  return "{\"metadata\":{},\"weight_map\":{" + map + "}}";
}

// The files as the page sends them: whole files here (the header prefix is their start).
ModelFiles files_of(bool with_index) {
  ModelFiles f;
  f.folder = "tiny";
  f.config_text = kConfig;
  if (with_index) f.index_text = index_json();
  for (int i = 0; i < 2; ++i) {
    const std::string bytes = st_file_bytes(shard(i));
    f.safetensors.push_back({"model-0000" + std::to_string(i + 1) + "-of-00002.safetensors",
                             static_cast<std::int64_t>(bytes.size()), bytes});
  }
  return f;
}

void write_folder(const ModelFiles& f, const TempDir& dir) {
  write_bytes(dir.path() / "config.json", f.config_text);
  if (f.index_text) write_bytes(dir.path() / "model.safetensors.index.json", *f.index_text);
  for (const HeaderPrefix& h : f.safetensors) write_bytes(dir.path() / h.name, h.prefix);
}

TEST(ModelFiles, SameLedgerAsTheFolderOnDisk) {
  for (bool with_index : {false, true}) {
    const ModelFiles f = files_of(with_index);
    TempDir dir;
    write_folder(f, dir);
    const auto from_memory = load_model_files(f);
    const auto from_disk = load_model(dir.path().string());
    ASSERT_TRUE(from_memory.ok()) << from_memory.error().message();
    ASSERT_TRUE(from_disk.ok()) << from_disk.error().message();
    EXPECT_EQ(from_memory->source, SourceKind::safetensors);
    // 2 layers x (2x16 + 256 + 128 + 128 + 256 + 3x384) + 64x16 + 16 + 64x16 = 5,968 params.
    EXPECT_EQ(params_total(from_memory->inventory), 5968);
    TrainingPlan plan;
    plan.method = Method::lora;
    const Totals a = totals(estimate(*from_memory, plan));
    const Totals b = totals(estimate(*from_disk, plan));
    EXPECT_EQ(a.peak_bytes, b.peak_bytes);
    EXPECT_EQ(a.static_bytes, b.static_bytes);
  }
}

TEST(ModelFiles, OnlyTheHeaderIsNeeded) {
  ModelFiles f = files_of(false);
  for (HeaderPrefix& h : f.safetensors) {
    const std::size_t n = static_cast<unsigned char>(h.prefix[0]) |
                          (static_cast<std::size_t>(static_cast<unsigned char>(h.prefix[1])) << 8);
    h.prefix.resize(8 + n);  // the data section is not sent
  }
  const auto model = load_model_files(f);
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(params_total(model->inventory), 5968);
}

TEST(ModelFiles, ConfigAloneBuildsTheInventoryFromTheSpec) {
  ModelFiles f;
  f.config_text = kConfig;
  const auto model = load_model_files(f);
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model->source, SourceKind::config_file);
  EXPECT_EQ(params_total(model->inventory), 5968);
}

TEST(ModelFiles, ErrorsNameTheFileAndField) {
  ModelFiles f = files_of(true);
  f.safetensors.pop_back();
  auto model = load_model_files(f);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().file, "tiny/model.safetensors.index.json");
  EXPECT_NE(model.error().reason.find("model-00002-of-00002.safetensors"), std::string::npos);

  f = files_of(false);
  f.safetensors[0].size_bytes += 8;  // the tensors no longer tile the data section
  model = load_model_files(f);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().file, "tiny/model-00001-of-00002.safetensors");

  f = files_of(false);
  f.config_text = "{\"model_type\": \"llama\", ";
  model = load_model_files(f);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().message().rfind("tiny/config.json: not valid JSON", 0), 0u)
      << model.error().message();
}

// Headers that hold another model than config.json describes are refused, on disk and from the
// page alike, as transformers refuses them: a narrower embedding, or a layer past the config's.
TEST(ModelFiles, HeadersThatDisagreeWithTheConfigAreRefused) {
  const std::string wider = R"({"model_type": "llama", "vocab_size": 64, "hidden_size": 32,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "intermediate_size": 24})";
  const std::string one_layer = R"({"model_type": "llama", "vocab_size": 64, "hidden_size": 16,
    "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4,
    "intermediate_size": 24})";
  for (const auto& [config, field, says] :
       {std::tuple{wider, "hidden_size",
                   "model.embed_tokens.weight is [64, 16], but config.json "
                   "has vocab_size 64 and hidden_size 32"},
        std::tuple{one_layer, "num_hidden_layers",
                   "is in layer 1, but config.json has 1 layers"}}) {
    ModelFiles f = files_of(false);
    f.config_text = config;
    TempDir dir;
    write_folder(f, dir);
    for (const auto& model : {load_model_files(f), load_model(dir.path().string())}) {
      ASSERT_FALSE(model.ok());
      EXPECT_EQ(model.error().field, field);
      EXPECT_NE(model.error().reason.find(says), std::string::npos) << model.error().message();
    }
  }
}

}  // namespace
}  // namespace trainmem

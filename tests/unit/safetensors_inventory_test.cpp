// Tensor names to inventory groups: tiny Llama, GPT-2 and DeepSeek-like checkpoints written to a
// temp folder, whose header-derived inventory must match inventory(spec) role by role.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "io/safetensors.h"
#include "support/safetensors_writer.h"

namespace trainmem::io {
namespace {

using testing::st_file_bytes;
using testing::StEntry;
using testing::TempDir;
using testing::write_bytes;

// Parameters per (role, expert kind, bias, mtp): a view in which both inventories must agree.
using RoleKey = std::tuple<Role, ExpertKind, bool, bool>;
std::map<RoleKey, std::int64_t> by_role(const ParameterInventory& inv) {
  std::map<RoleKey, std::int64_t> out;
  for (const TensorGroup& g : inv.groups)
    out[{g.role, g.expert, g.is_bias, g.mtp}] += group_params(g);
  return out;
}

const TensorGroup* find_group(const ParameterInventory& inv, const std::string& name) {
  for (const TensorGroup& g : inv.groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

std::vector<SafetensorsTensor> as_tensors(const std::vector<StEntry>& entries) {
  const std::string bytes = st_file_bytes(entries);
  auto r = parse_safetensors_header(bytes, static_cast<std::int64_t>(bytes.size()), "x");
  EXPECT_TRUE(r.ok()) << r.error().message();
  return r.ok() ? r.value() : std::vector<SafetensorsTensor>{};
}

ModelSpec tiny_llama() {
  ModelSpec s;
  s.model_type = "llama";
  s.vocab = 64;
  s.hidden = 16;
  s.layers = 3;
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 4;
  s.intermediate = 24;
  return s;
}

std::vector<StEntry> llama_layer(int layer) {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
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

void append(std::vector<StEntry>& to, const std::vector<StEntry>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

TEST(SafetensorsInventory, ShardedLlamaMatchesSpecInventory) {
  TempDir dir;
  std::vector<StEntry> shard1 = {{"model.embed_tokens.weight", "BF16", {64, 16}}};
  append(shard1, llama_layer(0));
  append(shard1, llama_layer(1));
  std::vector<StEntry> shard2 = llama_layer(2);
  shard2.push_back({"model.norm.weight", "BF16", {16}});
  shard2.push_back({"lm_head.weight", "BF16", {64, 16}});
  write_bytes(dir.path() / "model-00001-of-00002.safetensors", st_file_bytes(shard1));
  write_bytes(dir.path() / "model-00002-of-00002.safetensors", st_file_bytes(shard2));
  std::string index = "{\"metadata\":{\"total_size\":0},\"weight_map\":{";
  bool first = true;
  for (const auto* shard : {&shard1, &shard2}) {
    for (const StEntry& e : *shard) {
      index += (first ? "\"" : ",\"") + e.name + "\":\"model-0000" +
               (shard == &shard1 ? "1" : "2") + "-of-00002.safetensors\"";
      first = false;
    }
  }
  write_bytes(dir.path() / "model.safetensors.index.json", index + "}}");

  const auto tensors = read_safetensors_folder(dir.path());
  ASSERT_TRUE(tensors.ok()) << tensors.error().message();
  const ModelSpec spec = tiny_llama();
  const TensorMapping m = map_tensors(*tensors, spec);
  EXPECT_TRUE(m.notes.empty());
  EXPECT_EQ(m.unknown_tensors, 0);
  EXPECT_EQ(params_total(m.inventory), params_total(inventory(spec)));
  EXPECT_EQ(params_total(m.inventory),
            64 * 16 * 2 + 16 + 3 * (2 * 16 + 2 * 256 + 2 * 128 + 3 * 384));
  EXPECT_EQ(by_role(m.inventory), by_role(inventory(spec)));

  // q_proj across both shards is one group spanning layers 0-2.
  const TensorGroup* q = find_group(m.inventory, "model.layers.0-2.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->multiplicity, 3);
  EXPECT_EQ(q->layer_first, 0);
  EXPECT_EQ(q->layer_last, 2);
  EXPECT_EQ(q->role, Role::q);
  EXPECT_EQ(q->dtype, Dtype::bf16);
  // Embeddings come first, the final norm and the head last.
  EXPECT_EQ(m.inventory.groups.front().role, Role::embedding);
  EXPECT_EQ(m.inventory.groups.back().layer_first, -1);
}

TEST(SafetensorsInventory, LayersWithDifferentDtypeOrShapeStaySeparate) {
  std::vector<StEntry> entries = llama_layer(0);
  append(entries, llama_layer(1));
  entries[0 + 9].dtype = "F32";  // layer 1's input_layernorm
  const auto inv = inventory_from_tensors(as_tensors(entries), tiny_llama());
  const TensorGroup* a = find_group(inv, "model.layers.0.input_layernorm.weight");
  const TensorGroup* b = find_group(inv, "model.layers.1.input_layernorm.weight");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, Dtype::f32);
  EXPECT_NE(find_group(inv, "model.layers.0-1.self_attn.q_proj.weight"), nullptr);
}

TEST(SafetensorsInventory, TiedHeadStoredTwiceIsCountedOnce) {
  ModelSpec spec = tiny_llama();
  spec.tied_embeddings = true;
  const auto m = map_tensors(as_tensors({{"model.embed_tokens.weight", "BF16", {64, 16}},
                                         {"lm_head.weight", "BF16", {64, 16}}}),
                             spec);
  ASSERT_EQ(m.inventory.groups.size(), 1u);
  EXPECT_EQ(m.skipped_tensors, 1);
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("lm_head.weight"), std::string::npos);
}

TEST(SafetensorsInventory, UnknownNamesAreKeptCountedAndNoted) {
  const auto m =
      map_tensors(as_tensors({{"model.layers.0.mystery.frobnicator.weight", "BF16", {4, 4}},
                              {"model.layers.0.self_attn.rotary_emb.inv_freq", "F32", {2}}}),
                  tiny_llama());
  ASSERT_EQ(m.inventory.groups.size(), 1u);
  EXPECT_EQ(group_params(m.inventory.groups[0]), 16);
  EXPECT_EQ(m.unknown_tensors, 1);
  EXPECT_EQ(m.skipped_tensors, 1);
  ASSERT_EQ(m.notes.size(), 2u);
  const std::string all = m.notes[0] + m.notes[1];
  EXPECT_NE(all.find("mystery.frobnicator"), std::string::npos);
  EXPECT_NE(all.find("inv_freq"), std::string::npos);
}

TEST(SafetensorsInventory, Gpt2Conv1dTransposedAndMaskBufferSkipped) {
  ModelSpec spec;
  spec.model_type = "gpt2";
  spec.vocab = 50;
  spec.hidden = 8;
  spec.layers = 2;
  spec.heads = 2;
  spec.kv_heads = 2;
  spec.head_dim = 4;
  spec.intermediate = 32;
  spec.max_positions = 16;
  spec.tied_embeddings = true;
  spec.learned_positions = true;
  spec.qkv_bias = spec.o_bias = spec.mlp_bias = true;
  spec.fused_qkv = true;
  spec.norm = NormKind::layer_norm;
  spec.mlp = MlpKind::plain;
  spec.storage_dtype = Dtype::f32;

  std::vector<StEntry> e = {{"wte.weight", "F32", {50, 8}}, {"wpe.weight", "F32", {16, 8}}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    append(e, {{p + "ln_1.weight", "F32", {8}},
               {p + "ln_1.bias", "F32", {8}},
               {p + "attn.bias", "F32", {1, 1, 16, 16}},
               {p + "attn.c_attn.weight", "F32", {8, 24}},
               {p + "attn.c_attn.bias", "F32", {24}},
               {p + "attn.c_proj.weight", "F32", {8, 8}},
               {p + "attn.c_proj.bias", "F32", {8}},
               {p + "ln_2.weight", "F32", {8}},
               {p + "ln_2.bias", "F32", {8}},
               {p + "mlp.c_fc.weight", "F32", {8, 32}},
               {p + "mlp.c_fc.bias", "F32", {32}},
               {p + "mlp.c_proj.weight", "F32", {32, 8}},
               {p + "mlp.c_proj.bias", "F32", {8}}});
  }
  append(e, {{"ln_f.weight", "F32", {8}}, {"ln_f.bias", "F32", {8}}});
  TempDir dir;
  write_bytes(dir.path() / "model.safetensors", st_file_bytes(e));
  const auto tensors = read_safetensors_folder(dir.path());
  ASSERT_TRUE(tensors.ok()) << tensors.error().message();
  const TensorMapping m = map_tensors(*tensors, spec);

  EXPECT_EQ(m.unknown_tensors, 0);
  EXPECT_EQ(m.skipped_tensors, 2);  // attn.bias in both layers
  EXPECT_EQ(params_total(m.inventory), params_total(inventory(spec)));
  EXPECT_EQ(by_role(m.inventory), by_role(inventory(spec)));
  const TensorGroup* qkv = find_group(m.inventory, "h.0-1.attn.c_attn.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->shape, (std::vector<std::int64_t>{24, 8}));
  EXPECT_EQ(qkv->dtype, Dtype::f32);
  const TensorGroup* down = find_group(m.inventory, "h.0-1.mlp.c_proj.weight");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->role, Role::down);
  EXPECT_EQ(down->shape, (std::vector<std::int64_t>{8, 32}));
  EXPECT_EQ(find_group(m.inventory, "h.0-1.attn.c_proj.weight")->role, Role::o);
}

ModelSpec tiny_deepseek() {
  ModelSpec s;
  s.model_type = "deepseek_v3";
  s.vocab = 32;
  s.hidden = 8;
  s.layers = 2;
  s.heads = 2;
  s.kv_heads = 2;
  s.head_dim = 4;
  s.intermediate = 16;
  s.mla = true;
  s.mla_spec = {4, 4, 2, 2, 2};
  s.moe.experts = 4;
  s.moe.top_k = 2;
  s.moe.expert_intermediate = 6;
  s.moe.shared_experts = 1;
  s.moe.shared_intermediate = 6;
  s.moe.first_dense_layers = 1;
  s.moe.router_score_bias = true;
  s.mtp_layers = 1;
  return s;
}

std::vector<StEntry> deepseek_layer(int layer, bool moe) {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  std::vector<StEntry> e = {{p + "input_layernorm.weight", "BF16", {8}},
                            {p + "post_attention_layernorm.weight", "BF16", {8}},
                            {p + "self_attn.q_a_proj.weight", "BF16", {4, 8}},
                            {p + "self_attn.q_a_layernorm.weight", "BF16", {4}},
                            {p + "self_attn.q_b_proj.weight", "BF16", {8, 4}},
                            {p + "self_attn.kv_a_proj_with_mqa.weight", "BF16", {6, 8}},
                            {p + "self_attn.kv_a_layernorm.weight", "BF16", {4}},
                            {p + "self_attn.kv_b_proj.weight", "BF16", {8, 4}},
                            {p + "self_attn.o_proj.weight", "BF16", {8, 4}}};
  if (!moe) {
    append(e, {{p + "mlp.gate_proj.weight", "BF16", {16, 8}},
               {p + "mlp.up_proj.weight", "BF16", {16, 8}},
               {p + "mlp.down_proj.weight", "BF16", {8, 16}}});
    return e;
  }
  append(e, {{p + "mlp.gate.weight", "BF16", {4, 8}},
             {p + "mlp.gate.e_score_correction_bias", "F32", {4}},
             {p + "mlp.shared_experts.gate_proj.weight", "BF16", {6, 8}},
             {p + "mlp.shared_experts.up_proj.weight", "BF16", {6, 8}},
             {p + "mlp.shared_experts.down_proj.weight", "BF16", {8, 6}}});
  for (int x = 0; x < 4; ++x) {
    const std::string q = p + "mlp.experts." + std::to_string(x) + ".";
    append(e, {{q + "gate_proj.weight", "BF16", {6, 8}},
               {q + "up_proj.weight", "BF16", {6, 8}},
               {q + "down_proj.weight", "BF16", {8, 6}},
               {q + "down_proj.weight_scale_inv", "F32", {1, 1}}});
  }
  return e;
}

TEST(SafetensorsInventory, DeepSeekMoeMlaAndMtpMatchSpecInventory) {
  std::vector<StEntry> e = {{"model.embed_tokens.weight", "BF16", {32, 8}}};
  append(e, deepseek_layer(0, false));
  append(e, deepseek_layer(1, true));
  append(e, deepseek_layer(2, true));  // the MTP layer
  append(e, {{"model.layers.2.enorm.weight", "BF16", {8}},
             {"model.layers.2.hnorm.weight", "BF16", {8}},
             {"model.layers.2.eh_proj.weight", "BF16", {8, 16}},
             {"model.layers.2.shared_head.norm.weight", "BF16", {8}},
             {"model.layers.2.embed_tokens.weight", "BF16", {32, 8}},
             {"model.layers.2.shared_head.head.weight", "BF16", {32, 8}},
             {"model.norm.weight", "BF16", {8}},
             {"lm_head.weight", "BF16", {32, 8}}});
  const ModelSpec spec = tiny_deepseek();
  const TensorMapping m = map_tensors(as_tensors(e), spec);
  const ParameterInventory expected = inventory(spec);

  EXPECT_EQ(m.unknown_tensors, 0);
  EXPECT_EQ(m.skipped_tensors, 8);  // the FP8-style scales
  EXPECT_EQ(params_total(m.inventory), params_total(expected));
  EXPECT_EQ(params_mtp(m.inventory), params_mtp(expected));
  EXPECT_GT(params_mtp(m.inventory), 0);
  EXPECT_EQ(params_active(m.inventory, spec), params_active(expected, spec));
  EXPECT_EQ(by_role(m.inventory), by_role(expected));

  const TensorGroup* up = find_group(m.inventory, "model.layers.1.mlp.experts.*.up_proj.weight");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->expert, ExpertKind::routed);
  EXPECT_EQ(up->multiplicity, 4);
  EXPECT_FALSE(up->mtp);
  const TensorGroup* mtp_up =
      find_group(m.inventory, "model.layers.2.mlp.experts.*.up_proj.weight");
  ASSERT_NE(mtp_up, nullptr);
  EXPECT_TRUE(mtp_up->mtp);
  const TensorGroup* bias =
      find_group(m.inventory, "model.layers.1.mlp.gate.e_score_correction_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->role, Role::router_bias);
  EXPECT_EQ(bias->dtype, Dtype::f32);
}

TEST(SafetensorsInventory, MixtralAndPhi3Names) {
  ModelSpec spec = tiny_llama();
  const auto inv = inventory_from_tensors(
      as_tensors({{"model.layers.0.block_sparse_moe.gate.weight", "BF16", {4, 16}},
                  {"model.layers.0.block_sparse_moe.experts.0.w1.weight", "BF16", {24, 16}},
                  {"model.layers.0.block_sparse_moe.experts.0.w2.weight", "BF16", {16, 24}},
                  {"model.layers.0.block_sparse_moe.experts.0.w3.weight", "BF16", {24, 16}},
                  {"model.layers.0.self_attn.qkv_proj.weight", "BF16", {32, 16}},
                  {"model.layers.0.mlp.gate_up_proj.weight", "BF16", {48, 16}}}),
      spec);
  std::map<std::string, Role> roles;
  for (const TensorGroup& g : inv.groups) roles[g.name] = g.role;
  EXPECT_EQ(roles["model.layers.0.block_sparse_moe.gate.weight"], Role::router);
  EXPECT_EQ(roles["model.layers.0.block_sparse_moe.experts.*.w1.weight"], Role::gate);
  EXPECT_EQ(roles["model.layers.0.block_sparse_moe.experts.*.w2.weight"], Role::down);
  EXPECT_EQ(roles["model.layers.0.block_sparse_moe.experts.*.w3.weight"], Role::up);
  EXPECT_EQ(roles["model.layers.0.self_attn.qkv_proj.weight"], Role::qkv);
  EXPECT_EQ(roles["model.layers.0.mlp.gate_up_proj.weight"], Role::gate_up);
}

// Phi's and GPT-NeoX's attention `dense` is the output projection and dense_h_to_4h /
// dense_4h_to_h the MLP (they were filed as up by their shape, so LoRA "o" missed them);
// GPT-NeoX's embed_out is its lm_head; gpt-oss stores its experts fused as parameters of the
// experts module ([experts, ...], with _bias twins) and a sink per head.
TEST(SafetensorsInventory, DenseNamesFusedExpertsAndSinks) {
  ModelSpec spec = tiny_llama();
  const auto inv = inventory_from_tensors(
      as_tensors({{"model.layers.0.self_attn.dense.weight", "BF16", {16, 16}},
                  {"gpt_neox.layers.0.attention.dense.weight", "BF16", {16, 16}},
                  {"gpt_neox.layers.0.mlp.dense_h_to_4h.weight", "BF16", {24, 16}},
                  {"gpt_neox.layers.0.mlp.dense_4h_to_h.weight", "BF16", {16, 24}},
                  {"embed_out.weight", "BF16", {64, 16}},
                  {"model.layers.0.mlp.router.weight", "BF16", {4, 16}},
                  {"model.layers.0.mlp.experts.gate_up_proj", "BF16", {4, 16, 48}},
                  {"model.layers.0.mlp.experts.gate_up_proj_bias", "BF16", {4, 48}},
                  {"model.layers.0.mlp.experts.down_proj", "BF16", {4, 24, 16}},
                  {"model.layers.0.self_attn.sinks", "BF16", {4}}}),
      spec);
  std::map<std::string, const TensorGroup*> groups;
  for (const TensorGroup& g : inv.groups) groups[g.name] = &g;
  EXPECT_EQ(groups["model.layers.0.self_attn.dense.weight"]->role, Role::o);
  EXPECT_EQ(groups["gpt_neox.layers.0.attention.dense.weight"]->role, Role::o);
  EXPECT_EQ(groups["gpt_neox.layers.0.mlp.dense_h_to_4h.weight"]->role, Role::up);
  EXPECT_EQ(groups["gpt_neox.layers.0.mlp.dense_4h_to_h.weight"]->role, Role::down);
  EXPECT_EQ(groups["embed_out.weight"]->role, Role::lm_head);
  EXPECT_EQ(groups["model.layers.0.mlp.router.weight"]->role, Role::router);
  const TensorGroup* gate_up = groups["model.layers.0.mlp.experts.gate_up_proj"];
  EXPECT_EQ(gate_up->role, Role::gate_up);
  EXPECT_EQ(gate_up->expert, ExpertKind::routed);
  EXPECT_FALSE(gate_up->is_bias);
  EXPECT_TRUE(groups["model.layers.0.mlp.experts.gate_up_proj_bias"]->is_bias);
  EXPECT_EQ(groups["model.layers.0.mlp.experts.down_proj"]->role, Role::down);
  EXPECT_EQ(groups["model.layers.0.self_attn.sinks"]->role, Role::attention_sinks);
}

}  // namespace
}  // namespace trainmem::io

// A checkpoint saved quantised (config.json quantization_config): what the config says, the
// plans it refuses and the flags the refusal names, and the inventory of a folder whose
// safetensors hold packed 4-bit weights.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/safetensors_writer.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

using testing::st_file_bytes;
using testing::StEntry;

// The tiny Llama of model_files_test: 5,968 parameters.
std::string tiny_llama(const std::string& quantization_config) {
  return R"({"model_type": "llama", "torch_dtype": "bfloat16", "vocab_size": 64,
    "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 4, "intermediate_size": 24,
    "max_position_embeddings": 128, "tie_word_embeddings": false)" +
         (quantization_config.empty() ? "" : ", \"quantization_config\": " + quantization_config) +
         "}";
}

// As unsloth's *-bnb-4bit uploads write it (BitsAndBytesConfig.to_dict()).
const std::string kNf4 = R"({"quant_method": "bitsandbytes", "load_in_4bit": true,
  "load_in_8bit": false, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true,
  "bnb_4bit_compute_dtype": "bfloat16"})";

CheckpointQuant quant_of(const std::string& q) {
  auto spec = spec_from_config_text(tiny_llama(q), "config.json");
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_TRUE(spec.ok() && spec->checkpoint_quant.has_value());
  return spec.ok() && spec->checkpoint_quant ? *spec->checkpoint_quant : CheckpointQuant{};
}

Error config_error(const std::string& q) {
  auto spec = spec_from_config_text(tiny_llama(q), "config.json");
  EXPECT_FALSE(spec.ok()) << q;
  return spec.ok() ? Error{} : spec.error();
}

LoadedModel model_with(const std::string& q) {
  auto m = model_from_config_text(tiny_llama(q), "tiny-bnb-4bit");
  EXPECT_TRUE(m.ok()) << m.error().message();
  return m.value();
}

TrainingPlan plan_of(Method method, QuantKind kind = QuantKind::nf4, bool double_quant = true) {
  TrainingPlan p;
  p.method = method;
  p.quant.kind = kind;
  p.quant.double_quant = double_quant;
  return p;
}

TEST(CheckpointQuant, ConfigWithoutOneHasNone) {
  auto spec = spec_from_config_text(tiny_llama(""), "config.json");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->checkpoint_quant.has_value());
}

TEST(CheckpointQuant, BitsandbytesFourBitReadsItsStorage) {
  const CheckpointQuant q = quant_of(kNf4);
  EXPECT_EQ(q.method, "bitsandbytes");
  EXPECT_EQ(q.storage, "nf4");
  EXPECT_TRUE(q.double_quant);
}

TEST(CheckpointQuant, FourBitWithoutAQuantTypeIsFp4AsBitsAndBytesConfigDefaults) {
  const CheckpointQuant q = quant_of(R"({"quant_method": "bitsandbytes", "load_in_4bit": true})");
  EXPECT_EQ(q.storage, "fp4");
  EXPECT_FALSE(q.double_quant);
}

TEST(CheckpointQuant, EightBitAndConfigsOlderThanQuantMethod) {
  EXPECT_EQ(quant_of(R"({"load_in_8bit": true})").storage, "int8");
  EXPECT_EQ(quant_of(R"({"load_in_8bit": true})").method, "bitsandbytes");
}

TEST(CheckpointQuant, OtherQuantisersAreNamedWithoutAStorage) {
  const CheckpointQuant q = quant_of(R"({"quant_method": "fp8", "fmt": "e4m3"})");
  EXPECT_EQ(q.method, "fp8");
  EXPECT_EQ(q.storage, "");
}

TEST(CheckpointQuant, MalformedConfigsNameTheKey) {
  EXPECT_EQ(config_error("[1]").field, "quantization_config");
  EXPECT_EQ(config_error(R"({"quant_method": 4})").field, "quantization_config.quant_method");
  EXPECT_EQ(config_error(R"({"bits": 4})").field, "quantization_config.quant_method");
  const Error both = config_error(
      R"({"quant_method": "bitsandbytes", "load_in_4bit": true, "load_in_8bit": true})");
  EXPECT_NE(both.reason.find("exactly one of load_in_4bit and load_in_8bit"), std::string::npos);
  EXPECT_EQ(config_error(R"({"load_in_4bit": true, "bnb_4bit_quant_type": "int4"})").field,
            "quantization_config.bnb_4bit_quant_type");
}

TEST(CheckpointQuant, LoraOnABitsandbytesCheckpointNamesTheQloraFlags) {
  const LoadedModel m = model_with(kNf4);
  const auto e = check_plan_for_model(m, plan_of(Method::lora));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->field, "--method");
  EXPECT_NE(e->reason.find("bitsandbytes nf4 with double quantisation"), std::string::npos)
      << e->reason;
  EXPECT_NE(e->reason.find("--method qlora --quant nf4"), std::string::npos) << e->reason;
}

TEST(CheckpointQuant, FullFineTuneOfAQuantisedCheckpointIsRefused) {
  const LoadedModel m = model_with(kNf4);
  for (Method method : {Method::full, Method::freeze}) {
    const auto e = check_plan_for_model(m, plan_of(method));
    ASSERT_TRUE(e.has_value());
    EXPECT_NE(e->reason.find("refuses to train a quantised model without adapters"),
              std::string::npos)
        << e->reason;
  }
}

TEST(CheckpointQuant, QloraMustQuantiseAsTheCheckpointDoes) {
  const LoadedModel m = model_with(kNf4);
  EXPECT_FALSE(check_plan_for_model(m, plan_of(Method::qlora)).has_value());
  const auto fp4 = check_plan_for_model(m, plan_of(Method::qlora, QuantKind::fp4));
  ASSERT_TRUE(fp4.has_value());
  EXPECT_EQ(fp4->field, "--quant");
  EXPECT_TRUE(check_plan_for_model(m, plan_of(Method::qlora, QuantKind::nf4, false)).has_value());
  // Without double quantisation the flags say so.
  const LoadedModel plain = model_with(R"({"load_in_4bit": true, "bnb_4bit_quant_type": "nf4"})");
  const auto e = check_plan_for_model(plain, plan_of(Method::lora));
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->reason.find("--method qlora --quant nf4 --no-double-quant"), std::string::npos)
      << e->reason;
  EXPECT_FALSE(check_plan_for_model(plain, plan_of(Method::qlora, QuantKind::nf4, false)));
  const LoadedModel int8 = model_with(R"({"load_in_8bit": true})");
  EXPECT_FALSE(check_plan_for_model(int8, plan_of(Method::qlora, QuantKind::int8)));
}

TEST(CheckpointQuant, OtherQuantisersPriceTheStorageDtypeWithANote) {
  const LoadedModel m = model_with(R"({"quant_method": "fp8"})");
  EXPECT_FALSE(check_plan_for_model(m, plan_of(Method::full)).has_value());
  const std::vector<std::string> notes = plan_notes(m, plan_of(Method::full), nullptr);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("quantization_config (fp8) is not priced"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("bf16"), std::string::npos) << notes[0];
}

// bitsandbytes stores a 4-bit weight as a [n/2, 1] uint8 tensor beside its absmax and quant map:
// the headers hold no parameter shape, so the inventory is config.json's (5,968 parameters).
TEST(CheckpointQuant, PackedSafetensorsTakeTheirShapesFromTheConfig) {
  std::vector<StEntry> tensors = {{"model.embed_tokens.weight", "BF16", {64, 16}},
                                  {"model.norm.weight", "BF16", {16}},
                                  {"lm_head.weight", "BF16", {64, 16}}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    tensors.push_back({p + "self_attn.q_proj.weight", "U8", {128, 1}});
    tensors.push_back({p + "self_attn.q_proj.weight.absmax", "U8", {4}});
    tensors.push_back({p + "self_attn.q_proj.weight.quant_map", "F32", {16}});
  }
  ModelFiles f;
  f.folder = "tiny-bnb-4bit";
  f.config_text = tiny_llama(kNf4);
  const std::string bytes = st_file_bytes(tensors);
  f.safetensors.push_back({"model.safetensors", static_cast<std::int64_t>(bytes.size()), bytes});
  const auto m = load_model_files(f);
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(params_total(m->inventory), 5968);
  ASSERT_FALSE(m->notes.empty());
  EXPECT_NE(m->notes[0].find("bitsandbytes-packed weights"), std::string::npos) << m->notes[0];
}

}  // namespace
}  // namespace trainmem

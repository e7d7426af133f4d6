// Plans the command line refuses, or reads differently, because of what the user's own flags,
// files and model say together: flags that disagree, a model saved quantised, a sequence past a
// learned position table, PEFT's default targets, and axolotl's target union.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::CliRun;
using trainmem::testing_support::contains;
using trainmem::testing_support::estimate_json;
using trainmem::testing_support::import_data;
using trainmem::testing_support::run_cli;

TEST(CliPlanChecks, FlagsThatDisagreeAreAUsageError) {
  const CliRun r = run_cli("estimate qwen3-0.6b --method full --load-in-4bit");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r,
                       "--load-in-4bit: disagrees with --method: one says method full, the "
                       "other qlora"))
      << r.out;
  const CliRun both = run_cli("estimate qwen3-0.6b --bf16 --fp16");
  EXPECT_EQ(both.code, 2) << both.out;
  EXPECT_TRUE(contains(both, "--fp16: disagrees with --bf16")) << both.out;
  // The same setting twice, in two spellings, agrees.
  EXPECT_EQ(estimate_json("qwen3-0.6b --precision BF16_Mixed --bf16")["plan"]["precision"],
            "bf16-mixed");
}

TEST(CliPlanChecks, FromTakesOneFileAndLeavesTheModel) {
  const auto j = estimate_json("--from " + import_data("trl_sft_config.yaml") + " qwen3-0.6b");
  EXPECT_EQ(j["model"]["source_detail"], "qwen3-0.6b");
  EXPECT_EQ(j["plan"]["batch"], 2);
}

TEST(CliPlanChecks, AModelSavedIn4BitNamesTheQloraFlags) {
  const auto dir = std::filesystem::temp_directory_path() / "trainmem_cli_bnb4";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "llama", "torch_dtype": "bfloat16",
    "vocab_size": 32000, "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
    "num_key_value_heads": 8, "intermediate_size": 1024, "max_position_embeddings": 2048,
    "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true,
      "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true}})";
  const CliRun lora = run_cli("estimate " + dir.string() + " --method lora");
  EXPECT_EQ(lora.code, 1) << lora.out;
  EXPECT_TRUE(contains(lora, "price it with --method qlora --quant nf4")) << lora.out;
  const auto j = estimate_json(dir.string() + " --method qlora");
  EXPECT_EQ(j["plan"]["method"], "qlora");
  std::filesystem::remove_all(dir);
}

TEST(CliPlanChecks, Gpt2RefusesASequencePastItsPositionTable) {
  const CliRun r = run_cli("estimate gpt2 --seq 2048");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r, "learned position table (n_positions 1024)")) << r.out;
  EXPECT_EQ(estimate_json("gpt2 --seq 1024")["plan"]["seq"], 1024);
}

TEST(CliPlanChecks, AFractionalParameterCountIsRefused) {
  const CliRun r = run_cli("estimate qwen3-0.6b --params 1.5");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r, "'1.5' is not a whole count")) << r.out;
}

// --params is a count with no tensors behind it: no allocator replay to disagree with the ledger,
// and the verdict judges the figure the report prints.
TEST(CliPlanChecks, AParameterCountIsJudgedOnItsOwnPeak) {
  const auto j = estimate_json("qwen3-0.6b --gpu h100 --params 8e9");
  EXPECT_FALSE(j.contains("gpu")) << j.dump().substr(0, 400);
  EXPECT_EQ(j["fit"]["figure"], "peak");
  EXPECT_EQ(j["fit"]["peak_bytes"], j["totals"]["peak_bytes"]);
  EXPECT_NE(j["notes"].dump().find("no allocator replay"), std::string::npos);
}

TEST(CliPlanChecks, TrlWithoutTargetModulesAdaptsPeftsDefault) {
  const auto j = estimate_json("--from " + import_data("trl_sft_peft_default_targets.yaml"));
  EXPECT_EQ(j["plan"]["method"], "lora");
  EXPECT_EQ(j["plan"]["lora"]["targets"], nlohmann::json::array({"q", "v"}));
}

TEST(CliPlanChecks, AxolotlLinearAndListedTargetsAreTheirUnion) {
  const auto j = estimate_json("--from " + import_data("axolotl_lora_linear_and_modules.yaml"));
  EXPECT_EQ(j["plan"]["lora"]["targets"], nlohmann::json::array({"all-linear", "lm_head"}))
      << j["plan"].dump();
}

// lora_modules_to_save (axolotl), modules_to_save (PEFT): a trained copy of each module, priced.
TEST(CliPlanChecks, ModulesToSaveArePricedFromFilesAndFlags) {
  const auto j = estimate_json("--from " + import_data("axolotl_lora_modules_to_save.yaml"));
  EXPECT_EQ(j["plan"]["lora"]["modules_to_save"], nlohmann::json::array({"embed", "lm_head"}))
      << j["plan"].dump();
  // Llama-3.1-8B: all-linear r16 adapters 41,943,040 + two 128,256 x 4,096 copies.
  EXPECT_EQ(j["model"]["params_trainable"], 41'943'040 + 2 * 525'336'576) << j["model"].dump();
  const auto flags = estimate_json(
      "llama-3.1-8b --method lora --lora-targets all-linear --precision bf16 --seq 1024 "
      "--gradient-checkpointing --modules-to-save embed_tokens,lm_head");
  EXPECT_EQ(flags["totals"]["peak_bytes"], j["totals"]["peak_bytes"]);
  const CliRun wrong = run_cli("estimate qwen3-0.6b --method lora --modules-to-save q_proj");
  EXPECT_EQ(wrong.code, 2) << wrong.out;
  EXPECT_TRUE(contains(wrong,
                       "--modules-to-save: 'q': trainmem prices trained copies of "
                       "embed_tokens and lm_head"))
      << wrong.out;
}

TEST(CliPlanChecks, AxolotlQloraWithout4BitIsRefusedAsAxolotlRefusesIt) {
  const CliRun r = run_cli("estimate --from " + import_data("axolotl_qlora_without_4bit.yaml"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r, "axolotl_qlora_without_4bit.yaml: adapter: qlora needs load_in_4bit"))
      << r.out;
}

TEST(CliPlanChecks, ALlamaConfigHasNoSlidingWindowDefaultNote) {
  const auto dir = std::filesystem::temp_directory_path() / "trainmem_cli_llama_defaults";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "llama", "vocab_size": 32000,
    "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
    "intermediate_size": 1024})";
  const auto j = estimate_json(dir.string());
  const std::string notes = j["notes"].dump();
  EXPECT_EQ(notes.find("use_sliding_window"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("sliding_window = 0"), std::string::npos) << notes;
  std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

// On a MoE model the module list names what a target reaches: the router (a module named "gate"
// in Qwen-MoE, which --lora-targets gate does not mean) and the routed experts ('experts'), not
// the experts' gate_proj that name matching no longer reaches in transformers v5.
TEST(CliPlanChecks, MoeModuleListNamesTheTargetsThatReachThem) {
  const CliRun r = run_cli("estimate qwen3-30b-a3b --method lora --lora-targets gate_proj");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r, "gate (the router: 'router'), lm_head, experts (the routed experts)"))
      << r.out;
  EXPECT_FALSE(contains(r, "gate_proj")) << r.out;
}

}  // namespace

namespace {

// bf16-mixed prices fp32 parameters; the note says what transformers 5's dtype="auto" default
// loads instead, and an older release stated with --versions keeps the older note.
TEST(CliPlanChecks, Bf16MixedNamesWhatTheTransformersReleaseLoads) {
  const std::string current = estimate_json("qwen3-0.6b --method lora --bf16")["notes"].dump();
  EXPECT_NE(current.find("transformers >= 5 loads the checkpoint's own bf16"), std::string::npos)
      << current;
  const std::string full = estimate_json("qwen3-0.6b --bf16")["notes"].dump();
  EXPECT_NE(full.find("the weights, their gradients and AdamW states in fp32"), std::string::npos)
      << full;
  const std::string old =
      estimate_json("qwen3-0.6b --method lora --bf16 --versions transformers=4.57")["notes"].dump();
  EXPECT_NE(old.find("as from_pretrained does without torch_dtype before transformers 5"),
            std::string::npos)
      << old;
  const std::string old_full =
      estimate_json("qwen3-0.6b --bf16 --versions transformers=4.57")["notes"].dump();
  EXPECT_EQ(old_full.find("bf16-mixed"), std::string::npos) << old_full;
}

}  // namespace

// --from FILE through the command line: one realistic file per format (tests/data/import/),
// written the way that tool writes it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::CliRun;
using trainmem::testing_support::contains;
using trainmem::testing_support::estimate_json;
using trainmem::testing_support::import_data;
using trainmem::testing_support::run_cli;

// The ledger line with this id, or null.
const nlohmann::json* item(const nlohmann::json& j, const std::string& id) {
  for (const auto& i : j["items"]) {
    if (i["id"] == id) return &i;
  }
  return nullptr;
}

// torch_compile / compile in a file prices the compiled loss: its row statistics line, no fp32
// log_softmax line; and the compiled layers.
void expect_compiled_loss(const nlohmann::json& j) {
  EXPECT_EQ(j["plan"]["behaviour"]["compiled_layers"], true) << j["plan"].dump();
  EXPECT_NE(item(j, "logits.compiled_row_stats"), nullptr) << j["items"].dump();
  EXPECT_EQ(item(j, "logits.log_softmax"), nullptr);
  EXPECT_NE(j["notes"].dump().find("torch.compile"), std::string::npos) << j["notes"].dump();
}

// A false in a file turns off what the framework's profile would default on: TRL's
// gradient_checkpointing (on since 0.22), torchtune's enable_activation_checkpointing; PyYAML's
// off reads as false, as HfArgumentParser and torchtune load it.
TEST(CliImport, FalseInAFileTurnsOffTheProfilesCheckpointing) {
  const auto trl = estimate_json("--from " + import_data("trl_sft_no_checkpointing.yaml"));
  EXPECT_EQ(trl["plan"]["checkpointing"], "none") << trl["notes"].dump();
  // torchtune's llama3_2/1B_lora_single_device.yaml sets it False; the full recipe's True.
  const auto tt = estimate_json("llama-3.2-1b --from " + import_data("torchtune_lora.yaml"));
  EXPECT_EQ(tt["plan"]["checkpointing"], "none") << tt["notes"].dump();
  const auto full =
      estimate_json("llama-3.2-1b --from " + import_data("torchtune_full_compile.yaml"));
  EXPECT_EQ(full["plan"]["checkpointing"], "full");
}

TEST(CliImport, TrlSftConfigYamlNamesTheModelAndThePlan) {
  const auto j = estimate_json("--from " + import_data("trl_sft_config.yaml"));
  EXPECT_EQ(j["model"]["name"], "Qwen/Qwen2.5-7B");
  const auto& p = j["plan"];
  EXPECT_EQ(p["method"], "lora");
  EXPECT_EQ(p["batch"], 2);
  EXPECT_EQ(p["grad_accum"], 8);
  EXPECT_EQ(p["seq"], 2048);
  EXPECT_EQ(p["checkpointing"], "full");
  EXPECT_EQ(p["precision"], "bf16-mixed");
  EXPECT_EQ(p["optimizer_impl"], "fused");
  EXPECT_EQ(p["lora"]["rank"], 16);
  EXPECT_EQ(p["lora"]["targets"], nlohmann::json::array({"q", "k", "v", "o"}));
  const std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("TRL SFTConfig"), std::string::npos) << notes;
  EXPECT_NE(notes.find("Ignored: "), std::string::npos) << notes;
  EXPECT_NE(notes.find("output_dir"), std::string::npos) << notes;
}

// A TRL file that leaves out gradient_checkpointing and per_device_train_batch_size gets what
// HfArgumentParser gives it: SFTConfig's checkpointing (TRL >= 0.22) and TrainingArguments'
// batch of 8, and TRL's profile; an older TRL or a flag turns checkpointing off.
TEST(CliImport, TrlFileWithoutCheckpointingOrBatchTakesTheDataclassDefaults) {
  const std::string file = import_data("trl_sft_defaults.yaml");
  const auto j = estimate_json("--from " + file);
  EXPECT_EQ(j["plan"]["framework"], "trl");
  EXPECT_EQ(j["plan"]["checkpointing"], "full");
  EXPECT_EQ(j["plan"]["batch"], 8);
  const std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("per_device_train_batch_size absent -> batch 8"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("-> framework trl"), std::string::npos) << notes;
  EXPECT_NE(notes.find("The trl profile's defaults for settings not given: checkpointing full"),
            std::string::npos)
      << notes;
  EXPECT_EQ(estimate_json("--from " + file + " --framework trl@0.21")["plan"]["checkpointing"],
            "none");
  // TRL's activation_offloading moves the checkpointed inputs to the host, as torchtune's does.
  EXPECT_FALSE(
      j["plan"].value("behaviour", nlohmann::json::object()).contains("offload_checkpoints"));
  const auto offload = estimate_json("--from " + import_data("trl_sft_offload.yaml"));
  EXPECT_EQ(offload["plan"]["checkpointing"], "full");
  EXPECT_EQ(offload["plan"]["behaviour"]["offload_checkpoints"], true) << offload["plan"].dump();
  EXPECT_EQ(estimate_json("--from " + file + " --checkpointing none")["plan"]["checkpointing"],
            "none");
  // Plain TrainingArguments (no TRL field) stay with the HF Trainer, which does not checkpoint.
  const auto hf = estimate_json("qwen3-0.6b --from " + import_data("training_args.json"));
  EXPECT_EQ(hf["plan"]["framework"], "hf");
  EXPECT_EQ(hf["plan"]["checkpointing"], "none");
}

// axolotl's activation offloading (and gradient_checkpointing: offload, which turns it on) moves
// the checkpointed inputs off the GPU; an absent sequence_len is axolotl's 512.
TEST(CliImport, AxolotlActivationOffloadingAndDefaultSequenceLength) {
  const auto j = estimate_json("--from " + import_data("axolotl_lora_offload.yaml"));
  EXPECT_EQ(j["plan"]["checkpointing"], "full");
  EXPECT_EQ(j["plan"]["behaviour"]["offload_checkpoints"], true) << j["plan"].dump();
  EXPECT_EQ(j["plan"]["seq"], 512);
  const std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("sequence_len absent -> seq 512"), std::string::npos) << notes;
  EXPECT_NE(notes.find("activation_offloading = true -> offload_activations true"),
            std::string::npos)
      << notes;
  const auto legacy = estimate_json("--from " + import_data("axolotl_gc_offload.yaml"));
  EXPECT_EQ(legacy["plan"]["checkpointing"], "full");
  EXPECT_EQ(legacy["plan"]["behaviour"]["offload_checkpoints"], true) << legacy["plan"].dump();
  // The plan's behaviour lists only what differs from the hf baseline.
  const auto plain = estimate_json("--from " + import_data("axolotl_qlora.yaml"));
  EXPECT_FALSE(
      plain["plan"].value("behaviour", nlohmann::json::object()).contains("offload_checkpoints"));
}

// transformers 5's new name for gradient checkpointing, with its kwargs: offload moves the saved
// inputs to the host; every_n_layers is priced as every layer, and the notes say it is a lower
// bound.
TEST(CliImport, TrainingArgumentsActivationCheckpointing) {
  const auto j = estimate_json("qwen3-0.6b --from " +
                               import_data("training_args_activation_checkpointing.json"));
  EXPECT_EQ(j["plan"]["checkpointing"], "full");
  EXPECT_EQ(j["plan"]["behaviour"]["offload_checkpoints"], true) << j["plan"].dump();
  const std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("activation_checkpointing_kwargs.every_n_layers (checkpointing every n-th "
                       "layer is priced as every layer"),
            std::string::npos)
      << notes;
}

TEST(CliImport, FlagsOverrideTheFileAndAModelArgumentWins) {
  const auto j = estimate_json("qwen3-0.6b --from " + import_data("trl_sft_config.yaml") +
                               " --batch 1 --lora-r 8");
  EXPECT_EQ(j["model"]["source_detail"], "qwen3-0.6b");
  EXPECT_EQ(j["plan"]["batch"], 1);
  EXPECT_EQ(j["plan"]["lora"]["rank"], 8);
  EXPECT_EQ(j["plan"]["grad_accum"], 8);  // still the file's
}

TEST(CliImport, TrainingArgumentsJson) {
  const auto p = estimate_json("qwen3-0.6b --from " + import_data("training_args.json"))["plan"];
  EXPECT_EQ(p["batch"], 4);
  EXPECT_EQ(p["grad_accum"], 4);
  EXPECT_EQ(p["precision"], "fp16-mixed");
  EXPECT_EQ(p["optimizer_impl"], "foreach");  // optim adamw_torch
  EXPECT_EQ(p["method"], "full");
}

TEST(CliImport, TorchCompileInTrainingArgumentsJson) {
  // The file is TRL's (max_length); before TRL 1.7 its loss is the full one, compiled.
  const auto j = estimate_json("qwen3-0.6b --from " + import_data("training_args_compile.json") +
                               " --framework trl@1.6");
  EXPECT_EQ(j["plan"]["batch"], 2);
  EXPECT_EQ(j["plan"]["checkpointing"], "full");
  expect_compiled_loss(j);
  // From TRL 1.7 the SFT loss is chunked_nll: no logits of the whole batch to compile.
  const auto current =
      estimate_json("qwen3-0.6b --from " + import_data("training_args_compile.json"));
  EXPECT_EQ(current["plan"]["loss"], "chunked");
  EXPECT_NE(item(current, "logits.chunked_forward"), nullptr);
  // The same file without the key prices the eager loss.
  const auto eager = estimate_json("qwen3-0.6b --from " + import_data("training_args.json"));
  EXPECT_EQ(item(eager, "logits.compiled_row_stats"), nullptr);
  EXPECT_NE(item(eager, "logits.log_softmax"), nullptr);
}

TEST(CliImport, PeftAdapterConfigAloneAndWithBitsAndBytesIsQlora) {
  const auto lora = estimate_json("--from " + import_data("adapter_config.json"));
  EXPECT_EQ(lora["model"]["name"], "Qwen/Qwen3-8B");
  EXPECT_EQ(lora["plan"]["method"], "lora");
  EXPECT_EQ(lora["plan"]["lora"]["rank"], 8);
  EXPECT_EQ(lora["plan"]["lora"]["targets"], nlohmann::json::array({"v", "q"}));
  const auto qlora = estimate_json("--from " + import_data("bnb_config.json") + " --from " +
                                   import_data("adapter_config.json"));
  EXPECT_EQ(qlora["plan"]["method"], "qlora");
  EXPECT_EQ(qlora["plan"]["quant"]["kind"], "nf4");
  EXPECT_EQ(qlora["plan"]["lora"]["rank"], 8);
  // bias "none" and a null modules_to_save ask for nothing: not listed as ignored keys.
  const CliRun text = run_cli("estimate --from " + import_data("adapter_config.json"));
  EXPECT_TRUE(contains(text, "bias = none (no change)")) << text.out;
  EXPECT_FALSE(contains(text, "bias (bias training is not priced)")) << text.out;
}

// TRL's ModelConfig carries load_in_4bit beside the training keys: the file is TRL's (its batch,
// length and model are read), not a BitsAndBytesConfig that happens to have other keys.
TEST(CliImport, TrlFileWithLoadIn4bitIsTrlNotBitsAndBytes) {
  const auto j = estimate_json("--from " + import_data("trl_load_in_4bit.yaml"));
  EXPECT_EQ(j["model"]["name"], "Qwen/Qwen3-0.6B");
  EXPECT_EQ(j["plan"]["method"], "qlora");
  EXPECT_EQ(j["plan"]["batch"], 16);
  EXPECT_EQ(j["plan"]["seq"], 4096);
  EXPECT_EQ(j["plan"]["framework"], "trl");
}

TEST(CliImport, AxolotlQloraYaml) {
  const auto p = estimate_json("llama-3.1-8b --from " + import_data("axolotl_qlora.yaml"))["plan"];
  EXPECT_EQ(p["method"], "qlora");
  EXPECT_EQ(p["seq"], 4096);
  EXPECT_EQ(p["batch"], 2);
  EXPECT_EQ(p["grad_accum"], 4);
  EXPECT_EQ(p["optimizer"], "paged-adamw");
  EXPECT_EQ(p["attention"], "flash");
  EXPECT_EQ(p["checkpointing"], "full");
  EXPECT_EQ(p["lora"]["rank"], 32);
  EXPECT_EQ(p["lora"]["targets"], nlohmann::json::array({"all-linear"}));
  // An axolotl config is priced under axolotl's profile; a --framework flag still wins.
  EXPECT_EQ(p["framework"], "axolotl");
  const auto hf = estimate_json("llama-3.1-8b --framework hf --from " +
                                import_data("axolotl_qlora.yaml"))["plan"];
  EXPECT_EQ(hf["framework"], "hf");
}

TEST(CliImport, AxolotlTorchCompile) {
  const auto j = estimate_json("llama-3.1-8b --from " + import_data("axolotl_lora_compile.yaml"));
  EXPECT_EQ(j["plan"]["method"], "lora");
  EXPECT_EQ(j["plan"]["seq"], 4096);
  expect_compiled_loss(j);
}

// axolotl's attn_implementation sets the attention priced: eager holds the score matrices, which
// the sdpa a file without the key gets does not.
TEST(CliImport, AxolotlAttnImplementationIsTheAttentionPriced) {
  const std::string file = import_data("axolotl_attn_implementation.yaml");
  const auto eager = estimate_json("--from " + file);
  EXPECT_EQ(eager["plan"]["attention"], "eager");
  const auto sdpa = estimate_json("--from " + file + " --attention sdpa");
  // Qwen3-0.6B: 16 heads x 2,048^2 scores x 2 sequences in bf16 is 256 MiB a layer alone.
  EXPECT_GT(eager["totals"]["peak_bytes"].get<std::int64_t>(),
            sdpa["totals"]["peak_bytes"].get<std::int64_t>() + (std::int64_t{256} << 20));
}

TEST(CliImport, LlamaFactoryTorchCompile) {
  const auto j =
      estimate_json("llama-3.1-8b --from " + import_data("llama_factory_lora_compile.yaml"));
  EXPECT_EQ(j["plan"]["method"], "lora");
  EXPECT_EQ(j["plan"]["seq"], 2048);
  expect_compiled_loss(j);
}

TEST(CliImport, LlamaFactoryYamlCheckpointsByDefault) {
  const auto p =
      estimate_json("llama-3.1-8b --from " + import_data("llama_factory_lora_sft.yaml"))["plan"];
  EXPECT_EQ(p["method"], "lora");
  EXPECT_EQ(p["lora"]["rank"], 8);
  EXPECT_EQ(p["lora"]["targets"], nlohmann::json::array({"all-linear"}));
  EXPECT_EQ(p["seq"], 2048);
  EXPECT_EQ(p["grad_accum"], 8);
  EXPECT_EQ(p["checkpointing"], "full");
  // LLaMA-Factory loads the checkpoint's bf16 and casts only the adapters to fp32.
  EXPECT_EQ(p["precision"], "bf16");
}

// What a LLaMA-Factory file leaves out is its FinetuningArguments default (LoRA, every linear
// layer, rank 8), and a 4-bit base skips prepare_model_for_kbit_training, which LLaMA-Factory
// never calls: the embedding and head stay bf16.
TEST(CliImport, LlamaFactoryDefaultsAreLoraOnAllLinearAtRank8) {
  const auto j = estimate_json("--from " + import_data("llama_factory_defaults.yaml"));
  const auto& p = j["plan"];
  EXPECT_EQ(p["method"], "qlora");
  EXPECT_EQ(p["lora"]["rank"], 8);
  EXPECT_EQ(p["lora"]["targets"], nlohmann::json::array({"all-linear"}));
  EXPECT_EQ(p["precision"], "bf16");
  EXPECT_EQ(p["quant"]["prepare_kbit"], false);
}

// TRL's ModelConfig.torch_dtype (dtype since transformers 5) loads the model in bf16, and
// bf16: true autocasts over it: bf16 weights, gradients and AdamW states, no fp32 copy.
TEST(CliImport, TrlTorchDtypeBfloat16LoadsBf16Parameters) {
  const auto j = estimate_json("--from " + import_data("trl_sft_bf16_dtype.yaml"));
  EXPECT_EQ(j["plan"]["precision"], "bf16");
  const auto mixed =
      estimate_json("--from " + import_data("trl_sft_bf16_dtype.yaml") + " --precision bf16-mixed");
  EXPECT_EQ(mixed["plan"]["precision"], "bf16-mixed");
  // 596,049,920 parameters at 2 B instead of 4 B in the weights.
  const auto weights = [](const nlohmann::json& e) {
    std::int64_t n = 0;
    for (const auto& i : e["items"])
      if (i["tenant"] == "weights") n += i["bytes"].get<std::int64_t>();
    return n;
  };
  EXPECT_EQ(weights(mixed) - weights(j), std::int64_t{596'049'920} * 2);
}

TEST(CliImport, TorchtuneYamlIsPureBf16WithMlpAdapters) {
  const auto p = estimate_json("qwen3-0.6b --from " + import_data("torchtune_lora.yaml"))["plan"];
  EXPECT_EQ(p["method"], "lora");
  EXPECT_EQ(p["precision"], "bf16");
  EXPECT_EQ(p["optimizer_impl"], "fused");
  // LinearCrossEntropyLoss keeps every chunk's fp32 log_softmax, as the profile's 8-chunk loss
  // does: the full-loss path in 8 chunks, not TRL's recomputed chunks with an fp32 weight copy.
  EXPECT_EQ(p["loss"], "full");
  EXPECT_EQ(p["batch"], 4);
  EXPECT_EQ(p["lora"]["rank"], 64);
  EXPECT_EQ(p["lora"]["targets"], nlohmann::json::array({"q", "v", "o", "gate", "up", "down"}));
  // A torchtune recipe is priced under torchtune's profile; a --framework flag still wins.
  EXPECT_EQ(p["framework"], "torchtune");
  const auto hf =
      estimate_json("qwen3-0.6b --framework hf --from " + import_data("torchtune_lora.yaml"));
  EXPECT_EQ(hf["plan"]["framework"], "hf");
}

// A sequence limit set to null truncates nothing (torchtune's tokenizer.max_seq_len, TRL's
// max_length): the report says so and that --seq prices the longest sample, which a flag gives.
TEST(CliImport, NullSequenceLimitSaysNothingIsTruncated) {
  const auto tt = estimate_json("qwen3-0.6b --from " + import_data("torchtune_lora.yaml"));
  EXPECT_NE(tt["notes"].dump().find("tokenizer.max_seq_len = null (no truncation: the longest "
                                    "sample sets the length"),
            std::string::npos)
      << tt["notes"].dump();
  const auto trl = estimate_json("--from " + import_data("trl_sft_no_truncation.yaml"));
  EXPECT_NE(trl["notes"].dump().find("max_length = null (no truncation"), std::string::npos)
      << trl["notes"].dump();
  EXPECT_EQ(trl["notes"].dump().find("max_length = null (no change)"), std::string::npos);
  EXPECT_EQ(trl["plan"]["seq"], 1024);
  const auto given =
      estimate_json("--from " + import_data("trl_sft_no_truncation.yaml") + " --seq 4096");
  EXPECT_EQ(given["plan"]["seq"], 4096);
}

// A torchtune recipe names its model by the builder (model._component_): the file alone prices it,
// as the same file with the model given does.
TEST(CliImport, TorchtuneBuilderNamesTheModel) {
  const auto alone = estimate_json("--from " + import_data("torchtune_full_compile.yaml"));
  const auto named =
      estimate_json("llama-3.2-1b --from " + import_data("torchtune_full_compile.yaml"));
  EXPECT_EQ(alone["model"]["source_detail"], "llama-3.2-1b");
  EXPECT_EQ(alone["totals"]["peak_bytes"], named["totals"]["peak_bytes"]);
  const auto lora = estimate_json("--from " + import_data("torchtune_lora.yaml"));
  EXPECT_EQ(lora["model"]["source_detail"], "llama-3.2-1b");  // lora_llama3_2_1b
  EXPECT_EQ(lora["plan"]["method"], "lora");
}

// A model named only by the --from file is the one every command reports (advise printed a
// blank name, plan refused to start).
TEST(CliImport, EveryCommandTakesTheModelFromTheFile) {
  const std::string file = import_data("axolotl_qlora.yaml");
  const CliRun advise = run_cli("advise --from " + file + " --gpu rtx-4090");
  EXPECT_EQ(advise.out.rfind("NousResearch/Meta-Llama-3.1-8B on ", 0), 0u) << advise.out;
  const CliRun plan = run_cli("plan --from " + file + " --gpu h100-sxm --top 1 --json");
  ASSERT_EQ(plan.code, 0) << plan.out;
  EXPECT_EQ(nlohmann::json::parse(plan.out)["model"], "NousResearch/Meta-Llama-3.1-8B");
  const CliRun solve = run_cli("solve --from " + file + " --gpu rtx-4090 --for max-seq --json");
  EXPECT_EQ(nlohmann::json::parse(solve.out)["model"], "NousResearch/Meta-Llama-3.1-8B")
      << solve.out;
}

// compile, enable_activation_offloading and optimizer_in_bwd of a torchtune recipe config.
TEST(CliImport, TorchtuneCompileOffloadingAndOptimizerInBackward) {
  const auto j = estimate_json("llama-3.2-1b --from " + import_data("torchtune_full_compile.yaml"));
  EXPECT_EQ(j["plan"]["method"], "full");
  EXPECT_EQ(j["plan"]["optimizer"], "paged-adamw-8bit");
  EXPECT_EQ(j["plan"]["checkpointing"], "full");
  EXPECT_EQ(j["plan"]["seq"], 2048);
  expect_compiled_loss(j);
  const nlohmann::json* checkpoints = item(j, "activations.checkpoints");
  ASSERT_NE(checkpoints, nullptr);
  EXPECT_NE(checkpoints->at("label").get<std::string>().find("offloaded"), std::string::npos)
      << checkpoints->dump();
  const std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("The optimizer steps in backward."), std::string::npos) << notes;
  EXPECT_NE(notes.find("optimizer_in_bwd = True -> optimizer_in_backward true"), std::string::npos)
      << notes;
  // The lora config has all three off.
  const auto off = estimate_json("qwen3-0.6b --from " + import_data("torchtune_lora.yaml"));
  EXPECT_EQ(item(off, "logits.compiled_row_stats"), nullptr);
  EXPECT_EQ(off["notes"].dump().find("The optimizer steps in backward."), std::string::npos);
}

// The HF integration's ds_config ("auto" batch, accumulation and global batch) prices its ZeRO
// stage over the flags' GPUs; its settings still give the micro-batch and the master copy.
TEST(CliImport, DeepSpeedJsonWithAutoValuesShardsOverTheFlagsGpus) {
  const auto j = estimate_json("qwen3-0.6b --from " + import_data("ds_zero2.json") + " --gpus 8");
  EXPECT_EQ(j["schema"], "trainmem.distributed/1");
  EXPECT_EQ(j["layout"]["engine"], "deepspeed");
  EXPECT_EQ(j["layout"]["zero_stage"], 2);
  EXPECT_EQ(j["layout"]["world_size"], 8);
  const std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("read as DeepSpeed JSON"), std::string::npos) << notes;
  // The keys the layout reads are listed as read for it, not among the ignored ones.
  const auto layout = notes.find("For the layout:");
  const auto ignored = notes.find("Ignored:");
  ASSERT_NE(layout, std::string::npos) << notes;
  for (const char* key : {"zero_optimization.stage", "zero_optimization.reduce_bucket_size",
                          "zero_optimization.overlap_comm"}) {
    const auto at = notes.find(key, layout);
    EXPECT_TRUE(at != std::string::npos && at < ignored) << key << ": " << notes;
  }
  const auto& plan = j["ranks"][0]["ledger"]["plan"];
  EXPECT_EQ(plan["batch"], 2);
  EXPECT_EQ(plan["precision"], "bf16-fp32-master");
  // ZeRO-2 over 8 GPUs holds less per GPU than DDP over 8.
  const auto ddp = estimate_json("qwen3-0.6b --batch 2 --precision bf16-fp32-master --gpus 8");
  EXPECT_LT(j["most_loaded"]["peak_bytes"].get<std::int64_t>(),
            ddp["most_loaded"]["peak_bytes"].get<std::int64_t>());
}

// accelerate YAML as `accelerate config` writes it for DeepSpeed and for DDP.
TEST(CliImport, AccelerateDeepSpeedAndMultiGpuYamlGiveTheLayout) {
  const auto ds = estimate_json("qwen3-0.6b --from " + import_data("accelerate_deepspeed.yaml"));
  EXPECT_EQ(ds["layout"]["engine"], "deepspeed");
  EXPECT_EQ(ds["layout"]["zero_stage"], 3);
  EXPECT_EQ(ds["layout"]["offload_optimizer"], true);
  EXPECT_EQ(ds["layout"]["world_size"], 4);
  const auto ddp = estimate_json("qwen3-0.6b --from " + import_data("accelerate_multi_gpu.yaml"));
  EXPECT_EQ(ddp["layout"]["engine"], "ddp");
  EXPECT_EQ(ddp["layout"]["world_size"], 8);
}

// A settings file whose layout names a value no engine runs is refused naming the key: pricing
// the flags' layout instead answered for another run (DDP for a ZeRO-3 file).
TEST(CliImport, AnUnreadableLayoutIsAnError) {
  const CliRun r = run_cli("estimate qwen3-0.6b --from " + import_data("ds_bad_offload.json"));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r, "ds_bad_offload.json: zero_optimization.offload_optimizer.device"))
      << r.out;
}

TEST(CliImport, AccelerateYaml) {
  const auto j = estimate_json("qwen3-0.6b --from " + import_data("accelerate_config.yaml"));
  EXPECT_EQ(j["plan"]["precision"], "bf16-mixed");
  EXPECT_NE(j["notes"].dump().find("accelerate YAML"), std::string::npos);
}

TEST(CliImport, UnknownFilesAndBadValuesAreErrors) {
  const CliRun missing = run_cli("estimate qwen3-0.6b --from /nonexistent/sft.yaml");
  EXPECT_EQ(missing.code, 1);
  EXPECT_TRUE(contains(missing, "/nonexistent/sft.yaml")) << missing.out;
  const CliRun unknown =
      run_cli("estimate qwen3-0.6b --from " + import_data("../../../CMakePresets.json"));
  EXPECT_EQ(unknown.code, 1);
  EXPECT_TRUE(contains(unknown, "not a config trainmem can read")) << unknown.out;
  const CliRun no_model = run_cli("estimate --from " + import_data("ds_zero2.json"));
  EXPECT_EQ(no_model.code, 2);
  EXPECT_TRUE(contains(no_model, "name a model")) << no_model.out;
}

}  // namespace

namespace {

// ScriptArguments' dataset_name is TRL's alone: the file runs under SFTTrainer, with its defaults
// (gradient checkpointing on).
TEST(CliImport, TrlDatasetNameMakesTheFileTrls) {
  const auto p = estimate_json("--from " + import_data("trl_sft_dataset_only.yaml"))["plan"];
  EXPECT_EQ(p["framework"], "trl");
  EXPECT_EQ(p["checkpointing"], "full");
}

TEST(CliImport, TrlLoadIn8BitIsLoraOnAn8BitBase) {
  const auto p = estimate_json("--from " + import_data("trl_sft_lora_8bit.yaml"))["plan"];
  EXPECT_EQ(p["method"], "qlora");
  EXPECT_EQ(p["quant"]["kind"], "int8") << p.dump();
}

// optimizer_in_bwd switches both ways: False turns off the full recipe's default (the plan then
// lists the override), and the step holds every gradient, so the peak grows.
TEST(CliImport, TorchtuneOptimizerInBackwardFalseTurnsTheDefaultOff) {
  const std::string file = import_data("torchtune_full_no_optimizer_in_bwd.yaml");
  // A short step, so that the gradients, not the logits, set the peak.
  const std::string step = " --batch 1 --seq 128";
  const auto off = estimate_json("llama-3.2-1b --from " + file + step);
  const auto on = estimate_json("llama-3.2-1b --from " + file + step + " --optimizer-in-backward");
  EXPECT_EQ(off["plan"]["behaviour"]["optimizer_in_backward"], false) << off["plan"].dump();
  EXPECT_FALSE(
      on["plan"].value("behaviour", nlohmann::json::object()).contains("optimizer_in_backward"));
  EXPECT_GT(off["totals"]["peak_bytes"].get<std::int64_t>(),
            on["totals"]["peak_bytes"].get<std::int64_t>());
}

}  // namespace

namespace {

// axolotl loads the model in bf16 when bf16 is true or auto: a full fine-tune keeps bf16
// weights, gradients and AdamW states, priced as --precision bf16 (not bf16-mixed's fp32).
TEST(CliImport, AxolotlBf16LoadsTheModelInBf16) {
  const auto j = estimate_json("llama-3.2-1b --from " + import_data("axolotl_full_bf16.yaml"));
  EXPECT_EQ(j["plan"]["precision"], "bf16");
  const auto same = estimate_json(
      "llama-3.2-1b --precision bf16 --seq 1024 --batch 1 --grad-accum 8 --checkpointing full "
      "--attention flash --optim adamw_torch_fused --framework axolotl");
  EXPECT_EQ(j["totals"]["static_bytes"], same["totals"]["static_bytes"]);
  EXPECT_EQ(j["totals"]["peak_bytes"], same["totals"]["peak_bytes"]);
}

}  // namespace

namespace {

// A torchtune optimizer component is read by its module as well as its class: bitsandbytes'
// Lion and AdamW keep fp32 states (its 32-bit optimizers), lion-pytorch's Lion and torch's AdamW
// keep them like the parameters.
TEST(CliImport, TorchtuneOptimizerComponentsAreReadByTheirModule) {
  const auto dir = std::filesystem::temp_directory_path() / "trainmem_tt_optimizers";
  std::filesystem::create_directories(dir);
  const std::pair<std::string, std::string> cases[] = {
      {"bitsandbytes.optim.Lion", "lion-32bit"},
      {"bitsandbytes.optim.PagedLion8bit", "paged-lion-8bit"},
      {"bitsandbytes.optim.AdamW", "adamw-32bit"},
      {"lion_pytorch.Lion", "lion"},
      {"torch.optim.AdamW", "adamw"},
  };
  for (const auto& [component, optimizer] : cases) {
    const auto file = dir / (optimizer + ".yaml");
    std::ofstream(file) << "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\n"
                        << "batch_size: 2\noptimizer:\n  _component_: " << component
                        << "\n  lr: 2e-5\ndtype: bf16\n";
    const auto j = trainmem::testing_support::estimate_json("--from " + file.string());
    EXPECT_EQ(j["plan"]["optimizer"], optimizer) << component;
  }
}

}  // namespace

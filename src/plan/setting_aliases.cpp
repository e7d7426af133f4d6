// The ecosystem's own names for plan settings: the keys of HF TrainingArguments, TRL's SFTConfig
// and ModelConfig, PEFT's LoraConfig, BitsAndBytesConfig, axolotl and LLaMA-Factory, as a Python
// call or a settings patch gives them (estimate(..., per_device_train_batch_size=2, bf16=True)).
// The command line spells most of them as flags too (tools/cli/flags.cpp, with dashes or
// underscores), which land on the same plan settings.
#include "plan/setting_aliases.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "util/boolean.h"

namespace trainmem {
namespace {

// name, key, on_true, on_false, whose name. An empty on_true passes the value on as it is; a
// switch (on_true given) reads the value as a boolean and sets on_true or on_false (empty:
// nothing).
constexpr std::array<SettingAlias, 29> kAliases{{
    {"per_device_train_batch_size", "batch", "", "", "HF TrainingArguments"},
    {"micro_batch_size", "batch", "", "", "axolotl, litgpt"},
    {"batch_size", "batch", "", "", "torchtune"},
    {"max_length", "seq", "", "", "TRL SFTConfig"},
    {"max_seq_length", "seq", "", "", "TRL < 0.20, unsloth"},
    {"sequence_len", "seq", "", "", "axolotl"},
    {"cutoff_len", "seq", "", "", "LLaMA-Factory"},
    {"gradient_accumulation_steps", "grad_accum", "", "", "HF TrainingArguments"},
    {"optim", "optimizer", "", "", "HF TrainingArguments"},
    {"attn_implementation", "attention", "", "", "transformers from_pretrained"},
    {"per_device_eval_batch_size", "eval_batch", "", "", "HF TrainingArguments"},
    {"eval_batch_size", "eval_batch", "", "", "axolotl"},
    {"evaluation_strategy", "eval_strategy", "", "", "HF TrainingArguments < 4.46"},
    {"torch_compile", "compile", "", "", "HF TrainingArguments"},
    {"lora_r", "lora_rank", "", "", "TRL ModelConfig, axolotl"},
    {"target_modules", "lora_targets", "", "", "PEFT LoraConfig"},
    {"lora_target_modules", "lora_targets", "", "", "TRL ModelConfig, axolotl"},
    {"use_dora", "dora", "", "", "PEFT LoraConfig"},
    {"lora_modules_to_save", "modules_to_save", "", "", "TRL ModelConfig, axolotl"},
    {"num_train_epochs", "epochs", "", "", "HF TrainingArguments"},
    {"bnb_4bit_quant_type", "quant", "", "", "BitsAndBytesConfig"},
    {"bnb_4bit_use_double_quant", "double_quant", "", "", "BitsAndBytesConfig"},
    {"gradient_checkpointing", "checkpointing", "full", "none", "HF TrainingArguments"},
    {"bf16", "precision", "bf16-mixed", "", "HF TrainingArguments"},
    {"fp16", "precision", "fp16-mixed", "", "HF TrainingArguments"},
    {"load_in_4bit", "method", "qlora", "", "BitsAndBytesConfig"},
    {"load_in_8bit", "method", "qlora", "", "BitsAndBytesConfig"},
    {"load_in_8bit", "quant", "int8", "", "BitsAndBytesConfig"},
    {"use_liger_kernel", "loss", "fused", "", "HF TrainingArguments"},
}};

}  // namespace

std::span<const SettingAlias> setting_aliases() {
  return kAliases;
}

Result<PlanPatch> canonical_settings(const PlanSetting& s) {
  PlanPatch out;
  for (const SettingAlias& a : kAliases) {
    if (a.name != s.key) continue;
    const std::string origin = s.origin.empty() ? s.key : s.origin;
    if (a.on_true.empty()) {
      out.push_back({std::string(a.key), s.value, origin, s.from_file});
      continue;
    }
    const std::optional<bool> on = parse_boolean(s.value);
    if (!on) {
      return Error{s.from_file ? ErrorCode::bad_input : ErrorCode::usage, "", origin,
                   fmt::format("'{}' is not true or false", s.value)};
    }
    const std::string_view value = *on ? a.on_true : a.on_false;
    if (!value.empty())
      out.push_back({std::string(a.key), std::string(value), origin, s.from_file});
  }
  if (out.empty() && std::none_of(kAliases.begin(), kAliases.end(),
                                  [&](const SettingAlias& a) { return a.name == s.key; })) {
    out.push_back(s);  // a plan setting's own key
  }
  return out;
}

}  // namespace trainmem

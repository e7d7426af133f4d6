// Small helpers for writing a format's rules.
#pragma once

#include <fmt/format.h>

#include <string>

#include "io/import/formats.h"
#include "trainmem/plan.h"

namespace trainmem::io::rules {

// The value as it is: the plan setting understands the tool's spelling (vocabulary.h aliases).
inline ImportRule same(std::string key, std::string setting) {
  return {std::move(key), std::move(setting), [](const std::string& v) { return std::optional(v); },
          ""};
}
// A sequence-length key whose null means no truncation: the file cannot say how long the
// longest sample is, so the plan's --seq (its default unless given) stands for it.
inline ImportRule sequence_limit(std::string key) {
  ImportRule rule = same(std::move(key), "seq");
  rule.when_unset = fmt::format(
      "no truncation: the longest sample sets the length, which the file cannot say; --seq "
      "prices it ({} unless given) and --dataset measures it",
      TrainingPlan{}.seq);
  return rule;
}
// A boolean key: true sets `setting` to `value`, false says nothing.
inline ImportRule when_true(std::string key, std::string setting, std::string value) {
  return {std::move(key),
          std::move(setting),
          [value](const std::string& v) { return if_true(v, value); },
          "",
          "",
          "",
          true};
}
// A boolean key that switches a setting both ways: true sets `on`, false sets `off` (a file's
// `gradient_checkpointing: false` turns off what a framework profile would otherwise default
// on); any other value says nothing.
inline ImportRule on_off(std::string key, std::string setting, std::string on, std::string off) {
  return {std::move(key),
          std::move(setting),
          [on, off](const std::string& v) -> std::optional<std::string> {
            if (is_true(v)) return on;
            if (is_false(v)) return off;
            return std::nullopt;
          },
          "",
          "",
          "",
          true};
}
// A key trainmem knows but does not price; `why` is printed in the ignored list.
// A null value, or `inert`, asks for nothing and reads as "(no change)".
inline ImportRule not_priced(std::string key, std::string why, std::string inert = "") {
  return {std::move(key), "", nullptr, std::move(why), "", std::move(inert)};
}
// Why a settings file's distributed keys are not settings (docs/distributed.md): the layout reader
// reads DeepSpeed and accelerate files; a training config only names the DeepSpeed file, and its
// FSDP options have the layout flags.
inline constexpr const char* kReadForTheLayout = "read for the layout (the Layout line)";
inline constexpr const char* kNamesADeepSpeedConfig =
    "names a DeepSpeed config: give that file as another --from, with --gpus N, to price its "
    "layout";
inline constexpr const char* kFsdpByFlags =
    "FSDP across GPUs: give the layout as flags (--fsdp full --gpus N)";
inline bool has(const FlatConfig& c, const std::string& key) {
  return c.count(key) > 0;
}
inline bool has_prefix(const FlatConfig& c, const std::string& prefix) {
  const auto it = c.lower_bound(prefix);
  return it != c.end() && it->first.rfind(prefix, 0) == 0;
}
// HfArgumentParser fills an absent field with the dataclass default: TrainingArguments'
// per_device_train_batch_size is 8 (transformers training_args.py). For the formats parsed into
// TrainingArguments (TRL, LLaMA-Factory).
inline void training_arguments_batch_default(const FlatConfig& c, ImportedConfig& out) {
  if (has(c, "per_device_train_batch_size")) return;
  out.patch.push_back({"batch", "8", out.file + ": (per_device_train_batch_size absent)", true});
  out.used.push_back(
      "per_device_train_batch_size absent -> batch 8 (the TrainingArguments default)");
}

// A config that asks for LoRA without naming target modules leaves LoraConfig(target_modules=None),
// and PEFT adapts the model type's defaults (peft/utils/constants.py
// TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING): q_proj and v_proj for the LLaMA-style
// families (llama, mistral, mixtral, qwen2, qwen3, gemma, gemma2), and the fused attention
// projection elsewhere (GPT-2 c_attn, GPT-NeoX/Falcon query_key_value, Phi-3 qkv_proj), which
// q and v reach too. Not the command line's seven modules.
inline void peft_default_targets(ImportedConfig& out) {
  bool adapters = false;
  for (const PlanSetting& s : out.patch) {
    if (s.key == "lora_targets") return;
    if (s.key == "method") adapters = s.value == "lora" || s.value == "qlora";
  }
  if (!adapters) return;
  out.patch.push_back(
      {"lora_targets", "q,v", out.file + ": (no target modules: PEFT's default)", true});
  out.used.push_back("no target modules -> lora_targets q,v (PEFT's default for the model type)");
}

}  // namespace trainmem::io::rules

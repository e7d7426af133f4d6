// LLaMA-Factory YAML (src/llamafactory/hparams: model_name_or_path, stage, finetuning_type,
// lora_rank, lora_target, cutoff_len, quantization_bit, flash_attn, ...).
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {

const ImportFormat& llama_factory_format() {
  using namespace rules;
  static const ImportFormat f{
      "LLaMA-Factory YAML",
      [](const FlatConfig& c) {
        int score = 0;
        for (const char* k : {"finetuning_type", "stage", "cutoff_len", "lora_target",
                              "quantization_bit", "template"}) {
          score += has(c, k) ? 3 : 0;
        }
        return score;
      },
      {same("model_name_or_path", "model"),
       same("finetuning_type", "method"),
       {"quantization_bit", "method",
        [](const std::string&) -> std::optional<std::string> { return "qlora"; }, ""},
       {"quantization_bit", "quant",
        [](const std::string& v) -> std::optional<std::string> {
          return v == "8" ? "int8" : "nf4";
        },
        ""},
       same("quantization_type", "quant"),
       same("double_quantization", "double_quant"),
       same("lora_rank", "lora_rank"),
       same("lora_alpha", "lora_alpha"),
       same("lora_dropout", "lora_dropout"),
       {"lora_target", "lora_targets",
        [](const std::string& v) -> std::optional<std::string> {
          return v == "all" ? "all-linear" : v;
        },
        ""},
       // finetuning_args.py: "Name(s) of modules apart from LoRA layers to be set as trainable
       // and saved in the final checkpoint", passed to LoraConfig(modules_to_save=...).
       same("additional_target", "modules_to_save"),
       when_true("use_dora", "dora", "true"),
       same("cutoff_len", "seq"),
       same("per_device_train_batch_size", "batch"),
       same("gradient_accumulation_steps", "grad_accum"),
       {"disable_gradient_checkpointing", "checkpointing",
        [](const std::string& v) -> std::optional<std::string> {
          return is_true(v) ? "none" : "full";
        },
        ""},
       when_true("bf16", "precision", "bf16-mixed"),
       when_true("fp16", "precision", "fp16-mixed"),
       when_true("pure_bf16", "precision", "bf16"),
       same("optim", "optimizer"),
       {"flash_attn", "attention",
        [](const std::string& v) -> std::optional<std::string> {
          if (v == "auto") return std::nullopt;
          return v == "disabled" ? "eager" : v;
        },
        ""},
       when_true("enable_liger_kernel", "loss", "fused"),
       // An HF TrainingArguments field LLaMA-Factory passes through (Seq2SeqTrainingArguments).
       when_true("torch_compile", "compile", "true"),
       // HF TrainingArguments: evaluation runs only with eval_strategy; val_size only splits the
       // data (hparams/parser.py checks val_size or eval_dataset when evaluating).
       same("eval_strategy", "eval_strategy"),
       same("per_device_eval_batch_size", "eval_batch"),
       not_priced("val_size", "a validation split; evaluation runs when eval_strategy is set"),
       same("learning_rate", "learning_rate"),
       same("num_train_epochs", "epochs"),
       not_priced("stage", "sft, pt and dpo stages are priced as one model's training step"),
       not_priced("packing", "packing changes sequence lengths, not the longest one"),
       not_priced("deepspeed", kNamesADeepSpeedConfig)},
      [](const FlatConfig& c, ImportedConfig& out) {
        training_arguments_batch_default(c, out);
        // LLaMA-Factory checkpoints by default (model_args.disable_gradient_checkpointing =
        // False).
        if (has(c, "disable_gradient_checkpointing")) return;
        out.patch.push_back({"checkpointing", "full",
                             out.file + ": (disable_gradient_checkpointing absent)", true});
        out.used.push_back(
            "disable_gradient_checkpointing absent -> checkpointing full (LLaMA-Factory default)");
      }};
  return f;
}

}  // namespace trainmem::io

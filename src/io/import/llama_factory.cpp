// LLaMA-Factory YAML (src/llamafactory/hparams: model_name_or_path, stage, finetuning_type,
// lora_rank, lora_target, cutoff_len, quantization_bit, flash_attn, ...).
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {
namespace {

std::string last_setting(const ImportedConfig& out, const std::string& key) {
  std::string value;
  for (const PlanSetting& s : out.patch)
    if (s.key == key) value = s.value;
  return value;
}

// FinetuningArguments' defaults (hparams/finetuning_args.py): finetuning_type "lora", lora_target
// "all", lora_rank 8. A file that leaves them out trains LoRA on every linear layer at rank 8.
void finetuning_defaults(const FlatConfig& c, ImportedConfig& out) {
  using rules::has;
  if (!has(c, "finetuning_type")) {
    out.patch.insert(out.patch.begin(),
                     {"method", "lora", out.file + ": (finetuning_type absent)", true});
    out.used.push_back("finetuning_type absent -> method lora (LLaMA-Factory's default)");
  }
  const std::string method = last_setting(out, "method");
  if (method != "lora" && method != "qlora") return;
  if (!has(c, "lora_target")) {
    out.patch.push_back({"lora_targets", "all-linear", out.file + ": (lora_target absent)", true});
    out.used.push_back("lora_target absent -> lora_targets all-linear (LLaMA-Factory's default)");
  }
  if (!has(c, "lora_rank")) {
    out.patch.push_back({"lora_rank", "8", out.file + ": (lora_rank absent)", true});
    out.used.push_back("lora_rank absent -> lora_rank 8 (LLaMA-Factory's default)");
  }
}

// How LLaMA-Factory loads and casts (model/loader.py: from_pretrained(torch_dtype="auto"), the
// checkpoint's own bf16; model/adapter.py init_adapter: the trainable parameters are cast to fp32
// unless pure_bf16). LoRA and QLoRA therefore train fp32 adapters over a bf16 base under the
// Trainer's bf16 autocast, --precision bf16, not bf16-mixed's fp32 base; a full fine-tune trains
// every parameter, all cast to fp32, which bf16-mixed prices. It never calls PEFT's
// prepare_model_for_kbit_training (model/model_utils/checkpointing.py prepare_model_for_training
// upcasts layer norms only when upcast_layernorm is set), so a quantised base keeps its 16-bit
// embedding, norms and head.
void load_dtype(const FlatConfig& c, ImportedConfig& out) {
  const std::string method = last_setting(out, "method");
  const bool adapters = method == "lora" || method == "qlora";
  if (adapters && rules::has(c, "bf16") && is_true(c.at("bf16")) &&
      last_setting(out, "precision") == "bf16-mixed") {
    out.patch.push_back({"precision", "bf16", out.file + ": bf16 (with adapters)", true});
    out.used.push_back(
        "bf16 with LoRA -> precision bf16 (LLaMA-Factory loads the checkpoint's bf16 and casts "
        "only the adapters to fp32)");
  }
  if (method == "qlora") {
    out.patch.push_back(
        {"prepare_kbit", "false", out.file + ": (LLaMA-Factory loads 4-bit models)", true});
    out.used.push_back(
        "quantization_bit -> no prepare_model_for_kbit_training (LLaMA-Factory does not call it)");
  }
}

}  // namespace

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
       // Read by the refusal below: sft and pt are one model's step, what trainmem prices.
       {"stage", "", [](const std::string&) { return std::optional<std::string>(); }, ""},
       not_priced("packing", "packing changes sequence lengths, not the longest one"),
       not_priced("deepspeed", kNamesADeepSpeedConfig)},
      [](const FlatConfig& c, ImportedConfig& out) {
        training_arguments_batch_default(c, out);
        finetuning_defaults(c, out);
        load_dtype(c, out);
        // LLaMA-Factory checkpoints by default (model_args.disable_gradient_checkpointing =
        // False).
        if (has(c, "disable_gradient_checkpointing")) return;
        out.patch.push_back({"checkpointing", "full",
                             out.file + ": (disable_gradient_checkpointing absent)", true});
        out.used.push_back(
            "disable_gradient_checkpointing absent -> checkpointing full (LLaMA-Factory default)");
      },
      // stage (hparams/finetuning_args.py: pt, sft, rm, ppo, dpo, kto). A preference or RL stage
      // is not one model's step: DPO and KTO concatenate chosen and rejected into one forward
      // (train/dpo/trainer.py concatenated_forward) and run a reference forward beside the
      // policy's graph; reward modelling doubles the batch, PPO generates and runs a value head.
      // Priced as SFT it would be low, so it is refused rather than answered.
      [](const FlatConfig& c, const std::string& file) -> std::optional<Error> {
        // model/model_utils/quantization.py: on-the-fly bitsandbytes takes 4 or 8 bits
        // ("Bitsandbytes only accepts 4-bit or 8-bit quantization."); other bit widths are HQQ's,
        // not priced.
        if (rules::has(c, "quantization_bit") && c.at("quantization_bit") != "4" &&
            c.at("quantization_bit") != "8" && !io::is_unset(c.at("quantization_bit"))) {
          return bad_input(file, "quantization_bit",
                           fmt::format("'{}': bitsandbytes quantises to 4 or 8 bits, which is what "
                                       "trainmem prices (LLaMA-Factory refuses other widths with "
                                       "bitsandbytes)",
                                       c.at("quantization_bit")));
        }
        if (!rules::has(c, "stage")) return std::nullopt;
        const std::string& stage = c.at("stage");
        if (stage == "sft" || stage == "pt") return std::nullopt;
        return bad_input(
            file, "stage",
            fmt::format("'{}': trainmem prices one model's sft or pt step; a {} step runs more "
                        "than that (chosen and rejected together, a reference or value model), "
                        "which it does not price. The policy's forward and backward alone are "
                        "the sft step at twice the batch, a lower bound.",
                        stage, stage));
      }};
  return f;
}

}  // namespace trainmem::io

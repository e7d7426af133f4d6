// TRL SFTConfig / HF TrainingArguments (and TRL's ModelConfig), as HfArgumentParser reads them
// from JSON or YAML: keys are the dataclass field names (trl/trainer/sft_config.py,
// transformers/training_args.py, trl/trainer/model_config.py), and an absent field takes its
// dataclass default.
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {
namespace {

constexpr const char* kEveryNLayers =
    "checkpointing every n-th layer is priced as every layer: the other layers' activations are "
    "not counted, a lower bound";

// TRL's ModelConfig.dtype (torch_dtype before transformers 5) and SFTConfig.model_init_kwargs
// load the model in that dtype (trl/scripts/sft.py passes dtype=model_args.dtype to
// from_pretrained; model_config.py defaults it to float32). bfloat16 gives bf16 parameters that
// bf16=True autocasts over, --precision bf16 (PEFT still keeps LoRA adapters in fp32); float32 is
// what bf16=True / fp16=True already price. float16 and "auto" (the checkpoint's dtype) change
// nothing here: an fp16 base has no recipe of its own (fp16-mixed prices more), and "auto" on a
// bf16 checkpoint is the note bf16-mixed prints. The flattened file is sorted by key, so these keys
// come after "bf16", and a bf16 load wins over bf16=True's bf16-mixed.
ImportRule load_dtype(std::string key) {
  return {std::move(key), "precision",
          [](const std::string& v) -> std::optional<std::string> {
            if (v == "bfloat16" || v == "torch.bfloat16" || v == "bf16") return "bf16";
            return std::nullopt;
          },
          ""};
}

}  // namespace

const ImportFormat& trl_format() {
  using namespace rules;
  static const ImportFormat f{
      "TRL SFTConfig / HF TrainingArguments",
      [](const FlatConfig& c) {
        int score = 0;
        for (const char* k :
             {"per_device_train_batch_size", "output_dir", "optim", "gradient_accumulation_steps",
              "max_length", "max_seq_length", "num_train_epochs", "model_name_or_path"}) {
          score += has(c, k) ? 1 : 0;
        }
        // LLaMA-Factory shares HF names; its own keys outbid these.
        return score;
      },
      {same("model_name_or_path", "model"),
       same("per_device_train_batch_size", "batch"),
       same("gradient_accumulation_steps", "grad_accum"),
       on_off("gradient_checkpointing", "checkpointing", "full", "none"),
       // transformers >= 5.2x training_args.py: activation_checkpointing is the new name of
       // gradient_checkpointing (the old one a deprecated alias); its kwargs' offload holds the
       // saved activations in pinned host memory, every_n_layers checkpoints every n-th layer.
       on_off("activation_checkpointing", "checkpointing", "full", "none"),
       when_true("activation_checkpointing_kwargs.offload", "offload_activations", "true"),
       when_true("gradient_checkpointing_kwargs.offload", "offload_activations", "true"),
       not_priced("activation_checkpointing_kwargs.every_n_layers", kEveryNLayers),
       not_priced("gradient_checkpointing_kwargs.every_n_layers", kEveryNLayers),
       when_true("bf16", "precision", "bf16-mixed"),
       when_true("fp16", "precision", "fp16-mixed"),
       same("optim", "optimizer"),
       // trl sft_config.py max_length: "If `None`, no truncation is applied." (the older
       // max_seq_length: None falls back to min(tokenizer.model_max_length, 1024)).
       sequence_limit("max_length"),
       same("max_seq_length", "seq"),
       when_true("use_liger_kernel", "loss", "fused"),
       // transformers training_args.py torch_compile: the Trainer compiles the model, whose
       // forward runs the loss (ForCausalLMLoss) when it is given the labels.
       when_true("torch_compile", "compile", "true"),
       // transformers 5 training_args.py use_cache (default False): the Trainer copies it into
       // model.config.use_cache, so a true one builds the KV cache in training.
       same("use_cache", "use_cache"),
       // Evaluation between steps (transformers training_args.py eval_strategy, default "no";
       // per_device_eval_batch_size, default 8; evaluation_strategy is the pre-4.46 name).
       same("eval_strategy", "eval_strategy"),
       same("evaluation_strategy", "eval_strategy"),
       same("per_device_eval_batch_size", "eval_batch"),
       same("learning_rate", "learning_rate"),
       same("num_train_epochs", "epochs"),
       same("attn_implementation", "attention"),
       same("model_init_kwargs.attn_implementation", "attention"),
       when_true("use_peft", "method", "lora"),
       same("lora_r", "lora_rank"),
       same("lora_alpha", "lora_alpha"),
       same("lora_dropout", "lora_dropout"),
       same("lora_target_modules", "lora_targets"),
       same("lora_modules_to_save", "modules_to_save"),
       when_true("use_dora", "dora", "true"),
       when_true("load_in_4bit", "method", "qlora"),
       // ModelConfig.load_in_8bit: LoRA on a bitsandbytes 8-bit base (trl/trainer/utils.py
       // get_quantization_config: BitsAndBytesConfig(load_in_8bit=True)).
       when_true("load_in_8bit", "method", "qlora"),
       when_true("load_in_8bit", "quant", "int8"),
       same("bnb_4bit_quant_type", "quant"),
       same("use_bnb_nested_quant", "double_quant"),
       // TRL sft_config.py loss_type (>= 1.4): chunked_nll (the default from 1.7) runs the lm_head
       // and the loss on chunks of 256 tokens (logits.cpp trl_chunked_loss); nll and dft the
       // full loss.
       {"loss_type", "loss",
        [](const std::string& v) -> std::optional<std::string> {
          if (v == "chunked_nll") return "chunked";
          if (v == "nll" || v == "dft") return "full";
          return v;
        },
        ""},
       // TRL >= 0.18 activation_offloading: torchtune's OffloadActivations around the forward
       // (sft_trainer.py get_act_offloading_ctx_manager). Under gradient checkpointing, TRL's
       // default, the tensors it moves to the host are the layers' inputs, what
       // offload_activations prices; without checkpointing the rest stay priced on the GPU.
       when_true("activation_offloading", "offload_activations", "true"),
       not_priced("packing", "packing changes sequence lengths, not the longest one priced"),
       not_priced("padding_free", "affects padding, not the longest sequence priced"),
       not_priced("deepspeed", kNamesADeepSpeedConfig),
       not_priced("fsdp", kFsdpByFlags),
       load_dtype("dtype"),
       load_dtype("torch_dtype"),
       load_dtype("model_init_kwargs.dtype"),
       load_dtype("model_init_kwargs.torch_dtype")},
      [](const FlatConfig& c, ImportedConfig& out) {
        // Keys only TRL's dataclasses have (SFTConfig, ModelConfig, ScriptArguments) make the
        // file TRL's: its SFTTrainer runs it, with SFTConfig's defaults (the trl profile:
        // gradient checkpointing on since 0.22).
        for (const char* k :
             {"max_length", "max_seq_length", "packing", "padding_free", "dataset_text_field",
              "completion_only_loss", "assistant_only_loss", "use_peft", "lora_r",
              "lora_target_modules", "load_in_4bit", "load_in_8bit", "use_bnb_nested_quant",
              "model_init_kwargs", "dataset_name", "dataset_config", "dataset_train_split",
              "dataset_test_split", "model_revision"}) {
          if (!has(c, k) && !has_prefix(c, std::string(k) + ".")) continue;
          out.patch.insert(out.patch.begin(),
                           {"framework", "trl", out.file + ": (TRL's " + k + ")", true});
          out.used.push_back(std::string(k) + " (a TRL field) -> framework trl");
          break;
        }
        training_arguments_batch_default(c, out);
        peft_default_targets(out);
      }};
  return f;
}

}  // namespace trainmem::io

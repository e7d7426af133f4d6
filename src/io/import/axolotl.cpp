// axolotl YAML (axolotl/utils/schemas/config.py: base_model, adapter, sequence_len,
// micro_batch_size, lora_target_linear, flash_attention, ...).
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {

const ImportFormat& axolotl_format() {
  using namespace rules;
  static const ImportFormat f{
      "axolotl YAML",
      [](const FlatConfig& c) {
        int score = 0;
        for (const char* k : {"base_model", "sequence_len", "micro_batch_size", "adapter",
                              "lora_target_linear", "sample_packing", "datasets.path"}) {
          score += has(c, k) ? 2 : 0;
        }
        return score;
      },
      {same("base_model", "model"),
       same("adapter", "method"),
       when_true("load_in_4bit", "method", "qlora"),
       when_true("load_in_8bit", "method", "qlora"),
       when_true("load_in_8bit", "quant", "int8"),
       same("lora_r", "lora_rank"),
       same("lora_alpha", "lora_alpha"),
       same("lora_dropout", "lora_dropout"),
       same("lora_target_modules", "lora_targets"),
       when_true("lora_target_linear", "lora_targets", "all-linear"),
       when_true("peft_use_dora", "dora", "true"),
       same("sequence_len", "seq"),
       same("micro_batch_size", "batch"),
       same("gradient_accumulation_steps", "grad_accum"),
       {"gradient_checkpointing", "checkpointing",
        [](const std::string& v) -> std::optional<std::string> {
          // true, or "unsloth"/"offload" variants that still recompute every layer.
          if (v == "false") return std::nullopt;
          return "full";
        },
        ""},
       {"bf16", "precision",
        [](const std::string& v) -> std::optional<std::string> {
          if (v == "auto" || is_true(v)) return "bf16-mixed";
          return std::nullopt;
        },
        ""},
       when_true("fp16", "precision", "fp16-mixed"),
       same("optimizer", "optimizer"),
       when_true("flash_attention", "attention", "flash"),
       when_true("sdp_attention", "attention", "sdpa"),
       when_true("liger_fused_linear_cross_entropy", "loss", "fused"),
       when_true("cut_cross_entropy", "loss", "chunked"),
       same("learning_rate", "learning_rate"),
       same("num_epochs", "epochs"),
       not_priced("sample_packing", "packing changes sequence lengths, not the longest one"),
       not_priced("deepspeed", "multi-GPU layouts are not priced yet"),
       not_priced("fsdp", "multi-GPU layouts are not priced yet")},
      {}};
  return f;
}

}  // namespace trainmem::io

// PEFT adapter_config.json as LoraConfig.save_pretrained writes it (peft/tuners/lora/config.py).
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {

const ImportFormat& peft_format() {
  using namespace rules;
  static const ImportFormat f{
      "PEFT adapter_config.json",
      [](const FlatConfig& c) {
        if (has(c, "peft_type")) return 10;
        return has(c, "r") && has(c, "target_modules") ? 5 : 0;
      },
      {{"peft_type", "method",
        [](const std::string& v) -> std::optional<std::string> {
          if (v == "LORA") return "lora";
          return v;  // anything else is refused by the method vocabulary, naming the key
        },
        ""},
       same("base_model_name_or_path", "model"),
       same("r", "lora_rank"),
       same("lora_alpha", "lora_alpha"),
       same("lora_dropout", "lora_dropout"),
       same("target_modules", "lora_targets"),
       when_true("use_dora", "dora", "true"),
       same("layers_to_transform", "train_layers"),
       not_priced("task_type", "no memory effect"),
       not_priced("bias", "bias training is not priced", "none"),
       same("modules_to_save", "modules_to_save"),
       not_priced("fan_in_fan_out", "no memory effect"),
       not_priced("init_lora_weights", "no memory effect"),
       not_priced("use_rslora", "no memory effect"),
       not_priced("alpha_pattern", "no memory effect"),
       not_priced("rank_pattern", "per-module ranks are priced at r"),
       not_priced("exclude_modules",
                  "the excluded modules are still priced as targets (an over-estimate)"),
       not_priced("target_parameters",
                  "LoRA on parameters (MoE experts) is not priced; "
                  "--lora-targets experts prices every expert")},
      {}};
  return f;
}

}  // namespace trainmem::io

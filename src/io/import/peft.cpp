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
       not_priced("bias", "bias training is not priced"),
       not_priced("modules_to_save", "extra trained modules are not priced yet"),
       not_priced("fan_in_fan_out", "no memory effect"),
       not_priced("init_lora_weights", "no memory effect"),
       not_priced("use_rslora", "no memory effect")},
      {}};
  return f;
}

}  // namespace trainmem::io

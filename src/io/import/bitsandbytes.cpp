// BitsAndBytesConfig as to_dict() writes it, alone or as the quantization_config of a model's
// config.json (transformers/utils/quantization_config.py).
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {
namespace {

std::vector<ImportRule> bnb_rules(const std::string& prefix) {
  using namespace rules;
  return {when_true(prefix + "load_in_4bit", "method", "qlora"),
          when_true(prefix + "load_in_8bit", "method", "qlora"),
          {prefix + "load_in_8bit", "quant",
           [](const std::string& v) { return if_true(v, "int8"); }, ""},
          same(prefix + "bnb_4bit_quant_type", "quant"),
          same(prefix + "bnb_4bit_use_double_quant", "double_quant"),
          not_priced(prefix + "quant_method", "bitsandbytes is what QLoRA prices"),
          not_priced(prefix + "bnb_4bit_compute_dtype", "compute dtype follows --precision"),
          not_priced(prefix + "bnb_4bit_quant_storage", "storage as packed uint8 is priced"),
          not_priced(prefix + "llm_int8_skip_modules", "lm_head and router stay 16-bit anyway")};
}

}  // namespace

const ImportFormat& bitsandbytes_format() {
  static const ImportFormat f = [] {
    ImportFormat out{"BitsAndBytesConfig / quantization_config",
                     [](const FlatConfig& c) {
                       using rules::has;
                       if (has(c, "load_in_4bit") || has(c, "bnb_4bit_quant_type")) return 6;
                       if (has(c, "quantization_config.load_in_4bit") ||
                           has(c, "quantization_config.load_in_8bit"))
                         return 6;
                       return 0;
                     },
                     bnb_rules(""),
                     {}};
    for (ImportRule& r : bnb_rules("quantization_config.")) out.rules.push_back(std::move(r));
    return out;
  }();
  return f;
}

}  // namespace trainmem::io

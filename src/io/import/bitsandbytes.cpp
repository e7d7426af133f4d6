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

// A field BitsAndBytesConfig.to_dict() writes (transformers utils/quantization_config.py), alone
// or under a model config's quantization_config.
bool is_bnb_key(std::string_view key) {
  constexpr std::string_view kNested = "quantization_config.";
  if (key.starts_with(kNested)) key.remove_prefix(kNested.size());
  for (std::string_view prefix : {"bnb_4bit_", "llm_int8_", "load_in_", "_load_in_"}) {
    if (key.starts_with(prefix)) return true;
  }
  return key == "quant_method";
}

}  // namespace

const ImportFormat& bitsandbytes_format() {
  static const ImportFormat f = [] {
    ImportFormat out{"BitsAndBytesConfig / quantization_config",
                     [](const FlatConfig& c) {
                       using rules::has;
                       const bool quantises = has(c, "load_in_4bit") ||
                                              has(c, "bnb_4bit_quant_type") ||
                                              has(c, "quantization_config.load_in_4bit") ||
                                              has(c, "quantization_config.load_in_8bit");
                       if (!quantises) return 0;
                       // TRL's ModelConfig has load_in_4bit too: a file with keys beyond
                       // BitsAndBytesConfig's is another tool's, whose own detector must win.
                       for (const auto& entry : c) {
                         if (entry.first.ends_with(kListMark)) continue;
                         if (!is_bnb_key(entry.first)) return 1;
                       }
                       return 6;
                     },
                     bnb_rules(""),
                     {}};
    for (ImportRule& r : bnb_rules("quantization_config.")) out.rules.push_back(std::move(r));
    return out;
  }();
  return f;
}

}  // namespace trainmem::io

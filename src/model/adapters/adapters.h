// One adapter per Hugging Face model_type: the only code that knows config.json keys. Each reads
// its family's keys (with the config class's defaults for absent ones) into a ModelSpec.
#pragma once

#include <span>
#include <string_view>

#include "model/adapters/config_reader.h"

namespace trainmem::adapters {

using ReadFn = void (*)(ConfigReader& reader, ModelSpec& spec);

struct Adapter {
  std::string_view model_type;
  ReadFn read;
};

std::span<const Adapter> all();
const Adapter* find(std::string_view model_type);

void read_llama(ConfigReader& r, ModelSpec& s);
void read_mistral(ConfigReader& r, ModelSpec& s);
void read_qwen2(ConfigReader& r, ModelSpec& s);
void read_qwen3(ConfigReader& r, ModelSpec& s);
void read_qwen3_moe(ConfigReader& r, ModelSpec& s);
void read_mixtral(ConfigReader& r, ModelSpec& s);
void read_gemma2(ConfigReader& r, ModelSpec& s);
void read_gemma3_text(ConfigReader& r, ModelSpec& s);
void read_phi3(ConfigReader& r, ModelSpec& s);
void read_gpt2(ConfigReader& r, ModelSpec& s);
void read_deepseek_v3(ConfigReader& r, ModelSpec& s);
// src/model/adapters/ (issue 15)
void read_phi(ConfigReader& r, ModelSpec& s);
void read_gpt_neox(ConfigReader& r, ModelSpec& s);
void read_olmo2(ConfigReader& r, ModelSpec& s);
void read_gemma(ConfigReader& r, ModelSpec& s);
void read_granite(ConfigReader& r, ModelSpec& s);
void read_starcoder2(ConfigReader& r, ModelSpec& s);
void read_falcon(ConfigReader& r, ModelSpec& s);
void read_cohere(ConfigReader& r, ModelSpec& s);
void read_cohere2(ConfigReader& r, ModelSpec& s);
void read_gpt_oss(ConfigReader& r, ModelSpec& s);
void read_qwen2_moe(ConfigReader& r, ModelSpec& s);
void read_deepseek_v2(ConfigReader& r, ModelSpec& s);
// A model_type with no adapter: standard Hugging Face keys read as a Llama-shaped decoder, the
// activations marked estimated (src/model/adapters/generic.cpp).
void read_generic(ConfigReader& r, ModelSpec& s);

}  // namespace trainmem::adapters

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

}  // namespace trainmem::adapters

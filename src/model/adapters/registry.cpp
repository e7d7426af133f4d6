#include <array>

#include "model/adapters/adapters.h"

namespace trainmem::adapters {
namespace {

constexpr std::array<Adapter, 25> kAdapters{{
    {"llama", read_llama},
    {"mistral", read_mistral},
    {"qwen2", read_qwen2},
    {"qwen3", read_qwen3},
    {"qwen3_moe", read_qwen3_moe},
    {"mixtral", read_mixtral},
    {"gemma2", read_gemma2},
    {"gemma3_text", read_gemma3_text},
    {"phi3", read_phi3},
    {"gpt2", read_gpt2},
    {"deepseek_v3", read_deepseek_v3},
    {"phi", read_phi},
    {"gpt_neox", read_gpt_neox},
    {"olmo2", read_olmo2},
    {"gemma", read_gemma},
    {"granite", read_granite},
    {"starcoder2", read_starcoder2},
    {"falcon", read_falcon},
    {"RefinedWebModel", read_falcon},  // early Falcon configs; transformers maps them to falcon
    {"RefinedWeb", read_falcon},
    {"cohere", read_cohere},
    {"cohere2", read_cohere2},
    {"gpt_oss", read_gpt_oss},
    {"qwen2_moe", read_qwen2_moe},
    {"deepseek_v2", read_deepseek_v2},
}};

}  // namespace

std::span<const Adapter> all() {
  return kAdapters;
}

const Adapter* find(std::string_view model_type) {
  for (const Adapter& a : kAdapters) {
    if (a.model_type == model_type) return &a;
  }
  return nullptr;
}

}  // namespace trainmem::adapters

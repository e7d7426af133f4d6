#include <array>

#include "model/adapters/adapters.h"

namespace trainmem::adapters {
namespace {

constexpr std::array<Adapter, 11> kAdapters{{
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

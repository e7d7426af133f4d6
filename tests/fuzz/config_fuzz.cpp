// libFuzzer target for config.json: any bytes either give a one-line error or a model whose
// default plan (and a LoRA plan) prices with exact figures (fuzz_invariants.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_invariants.h"
#include "trainmem/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = trainmem::spec_from_config_text(text, "fuzz/config.json");
  if (!spec.ok()) {
    if (spec.error().reason.empty() || spec.error().message().size() > 1024) __builtin_trap();
    return 0;
  }
  const auto model =
      trainmem::model_from_spec(std::move(spec).value(), trainmem::SourceKind::config_file, "fuzz");
  trainmem::TrainingPlan plan;
  trainmem::fuzz::check_invariants(model, plan);
  plan.method = trainmem::Method::qlora;
  plan.lora.targets = {"all-linear"};
  trainmem::fuzz::check_invariants(model, plan);
  return 0;
}

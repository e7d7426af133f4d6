// libFuzzer target for --from files (TRL, PEFT, BitsAndBytesConfig, axolotl, LLaMA-Factory,
// torchtune, DeepSpeed, accelerate; JSON or YAML): any bytes either give a one-line error naming
// the file, or an import whose settings all come from that file. The layout reader (DeepSpeed,
// accelerate, torchtitan, launch scripts) reads the same bytes under the same rule.
#include <cstddef>
#include <cstdint>
#include <string>

#include "trainmem/distributed.h"
#include "trainmem/import.h"

namespace {

void check_error(const trainmem::Error& e) {
  if (e.reason.empty() || e.file != "fuzz/config.yaml" || e.message().size() > 2048) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // A layout is an error naming the file, or a plan that passes validate (import_config checks).
  auto layout = trainmem::import_config("fuzz/config.yaml", text, trainmem::TrainingPlan{}, 0);
  if (!layout.ok()) check_error(layout.error());
  auto imported = trainmem::import_config_text(text, "fuzz/config.yaml");
  if (!imported.ok()) {
    check_error(imported.error());
    return 0;
  }
  for (const trainmem::PlanSetting& s : imported->patch) {
    if (!s.from_file || s.origin.rfind("fuzz/config.yaml: ", 0) != 0) __builtin_trap();
  }
  // The imported settings either make a plan or are refused with an error naming their origin.
  auto plan = trainmem::plan_from(imported->patch);
  if (!plan.ok() && plan.error().message().empty()) __builtin_trap();
  return 0;
}

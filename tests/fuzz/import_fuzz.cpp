// libFuzzer target for --from files (TRL, PEFT, BitsAndBytesConfig, axolotl, LLaMA-Factory,
// torchtune, DeepSpeed, accelerate; JSON or YAML): any bytes either give a one-line error naming
// the file, or an import whose settings all come from that file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "trainmem/import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto imported = trainmem::import_config_text(text, "fuzz/config.yaml");
  if (!imported.ok()) {
    const trainmem::Error& e = imported.error();
    if (e.reason.empty() || e.file != "fuzz/config.yaml" || e.message().size() > 2048) {
      __builtin_trap();
    }
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

// libFuzzer target for measurement files (JSON lines): written to a file, read back through
// read_measurements(). Either a one-line error or records with positive peaks.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "trainmem/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("trainmem_meas_fuzz_" + std::to_string(::getpid()) + ".jsonl"))
                                      .string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const auto result = trainmem::read_measurements(path);
  if (!result.ok()) {
    if (result.error().reason.empty() || result.error().message().size() > 600) __builtin_trap();
    return 0;
  }
  for (const auto& r : result.value()) {
    if (r.peak_bytes <= 0) __builtin_trap();
  }
  return 0;
}

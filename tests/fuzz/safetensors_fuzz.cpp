// libFuzzer target for the safetensors header parser. The input is the whole file: its first
// bytes are the header length, and its size is the file size. Besides not crashing, a header the
// parser accepts must describe tensors that tile the data section exactly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto result =
      trainmem::io::parse_safetensors_header(bytes, static_cast<std::int64_t>(size), "fuzz");
  if (!result.ok()) {
    if (result.error().reason.empty()) __builtin_trap();  // every error says why
    return 0;
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  const auto data_bytes = static_cast<std::int64_t>(size - 8 - n);
  std::int64_t covered = 0;
  for (const auto& t : result.value()) {
    if (t.begin != covered || t.end < t.begin || t.end > data_bytes) __builtin_trap();
    covered = t.end;
  }
  if (covered != data_bytes) __builtin_trap();
  return 0;
}

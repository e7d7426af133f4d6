// libFuzzer target for size and count flags (--memory 24GiB, --params 1.5e9): any text either
// gives a one-line error or a positive int64.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trainmem/render.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto parse : {&trainmem::parse_size, &trainmem::parse_count}) {
    const auto r = parse(text, "--flag");
    if (r.ok() && r.value() <= 0) __builtin_trap();
    if (!r.ok() && r.error().reason.empty()) __builtin_trap();
  }
  return 0;
}

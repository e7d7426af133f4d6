// libFuzzer target for tokenizer.json files and the text they count (src/io/tokenizer/). The
// first byte picks: even, the rest is a tokenizer.json (an error with a reason, or a tokenizer that
// counts a few fixed strings and the input within bounds); odd, the rest is text counted by the
// trained test tokenizers (tests/data/tokenizers/). Never a crash, a hang or a negative count.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/tokenizer/tokenizer.h"

namespace {

// A count is at most 4 per byte plus 3: byte fallback gives one token per byte, and each part
// between added tokens may gain a prepended marker (Metaspace's U+2581 is 3 bytes).
void check(trainmem::tok::Tokenizer& t, const std::string& text) {
  auto n = t.count(text);
  if (!n.ok()) {
    if (n.error().reason.empty()) __builtin_trap();
    return;
  }
  if (*n < 0 || *n > 4 * static_cast<std::int64_t>(text.size()) + 3) __builtin_trap();
}

std::vector<trainmem::tok::Tokenizer>& trained() {
  static std::vector<trainmem::tok::Tokenizer> all = [] {
    std::vector<trainmem::tok::Tokenizer> out;
    for (const char* name :
         {"llama3_split", "llama2_prepend", "metaspace_digits_nfkc", "gpt2_prefix_space"}) {
      auto t = trainmem::tok::load_tokenizer_file(std::string(TRAINMEM_SOURCE_DIR) +
                                                  "/tests/data/tokenizers/" + name + ".json");
      if (!t.ok()) __builtin_trap();
      out.push_back(std::move(t).value());
    }
    return out;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 1) {
    for (auto& t : trained()) check(t, rest);
    return 0;
  }
  auto t = trainmem::tok::load_tokenizer(rest, "fuzz/tokenizer.json");
  if (!t.ok()) {
    const trainmem::Error& e = t.error();
    if (e.reason.empty() || e.file != "fuzz/tokenizer.json" || e.message().size() > 8192) {
      __builtin_trap();
    }
    return 0;
  }
  trainmem::tok::Tokenizer& loaded = t.value();
  for (const char* s : {"", "Hello  world 123", "<s> caf\xC3\xA9 \xE6\xA8\xA1\xE5\x9E\x8B",
                        "\xF0\x9F\x98\x80\n\n\t x"}) {
    check(loaded, s);
  }
  check(loaded, rest);
  return 0;
}

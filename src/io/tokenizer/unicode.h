// The Unicode a tokenizer.json needs, from ICU: its regexes (the `tokenizers` library compiles
// them with Oniguruma; \p{L}, \p{N}, \s and lookahead mean the same in ICU's engine, which the
// exactness tests in tests/unit/tokenizer_test.cpp check), normalization forms and character
// classes. Built only with ICU (TRAINMEM_HAVE_ICU); tokenizer.h's loader refuses otherwise.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainmem/errors.h"

namespace trainmem::tok {

// [start, end) byte offsets into a UTF-8 string.
using Span = std::pair<std::size_t, std::size_t>;

struct RegexImpl;
// A compiled regex; finding keeps a matcher, so one Regex is not shared across threads.
class Regex {
 public:
  // `field` names the pattern in errors (a bad pattern is an error, never a crash).
  static Result<Regex> compile(std::string_view pattern, const std::string& file,
                               const std::string& field);
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();
  // Every non-overlapping match in `text`, in order; an error when the engine's step limit runs
  // out (a pattern that backtracks without end on this text).
  Result<std::vector<Span>> find_all(std::string_view text) const;

 private:
  explicit Regex(std::unique_ptr<RegexImpl> impl);
  std::unique_ptr<RegexImpl> impl_;
};

enum class NormalForm { nfc, nfd, nfkc, nfkd };
// `text` in the normal form (Unicode Standard Annex #15).
std::string normalize(std::string_view text, NormalForm form);

// Each character lowercased on its own (Rust's char::to_lowercase, which the `tokenizers`
// Lowercase normalizer applies: the unconditional full mapping, no final-sigma context).
std::string lowercase_each(std::string_view text);

// Rust's char::is_whitespace: the Unicode White_Space property.
bool is_white_space(char32_t c);

// The code point at `text[i]` (valid UTF-8 assumed: callers pass checked text) and its length.
std::pair<char32_t, std::size_t> decode_utf8(std::string_view text, std::size_t i);

}  // namespace trainmem::tok

// ICU behind tokenizer/unicode.h.
#include "io/tokenizer/unicode.h"

#include <fmt/format.h>

#if TRAINMEM_HAVE_ICU
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#endif

namespace trainmem::tok {

std::pair<char32_t, std::size_t> decode_utf8(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  char32_t cp = 0;
  if (c < 0x80) return {c, 1};
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return {0xFFFD, 1};  // not a lead byte: one replacement character per byte
  }
  if (i + n > s.size()) return {0xFFFD, 1};
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 (RFC 3629, section 4).
  const unsigned char c1 = b(1);
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || (c == 0xF0 && c1 < 0x90) ||
      (c == 0xF4 && c1 >= 0x90)) {
    return {0xFFFD, 1};
  }
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return {0xFFFD, 1};
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  return {cp, n};
}

#if TRAINMEM_HAVE_ICU

namespace {

// ICU's match engine counts "steps" (about a millisecond each on 2010 hardware, its docs say):
// a find() that runs past this many is stopped with U_REGEX_TIME_OUT instead of hanging.
constexpr int32_t kRegexStepLimit = 5000;

std::string to_utf8(const icu::UnicodeString& u) {
  std::string out;
  u.toUTF8String(out);
  return out;
}

icu::UnicodeString from_utf8(std::string_view s) {
  return icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
}

bool all_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

struct RegexImpl {
  std::unique_ptr<icu::RegexPattern> pattern;
  std::unique_ptr<icu::RegexMatcher> matcher;
  icu::UnicodeString input;  // the matcher reads it in place
};

Regex::Regex(std::unique_ptr<RegexImpl> impl) : impl_(std::move(impl)) {}
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

Result<Regex> Regex::compile(std::string_view pattern, const std::string& file,
                             const std::string& field) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError where{};
  auto impl = std::make_unique<RegexImpl>();
  impl->pattern.reset(icu::RegexPattern::compile(from_utf8(pattern), 0, where, status));
  if (U_FAILURE(status) || !impl->pattern) {
    return bad_input(file, field,
                     fmt::format("the regex does not compile ({} at offset {})",
                                 u_errorName(status), where.offset));
  }
  impl->matcher.reset(impl->pattern->matcher(status));
  if (U_FAILURE(status) || !impl->matcher) {
    return bad_input(file, field,
                     fmt::format("the regex has no matcher ({})", u_errorName(status)));
  }
  impl->matcher->setTimeLimit(kRegexStepLimit, status);
  return Regex(std::move(impl));
}

Result<std::vector<Span>> Regex::find_all(std::string_view text) const {
  std::vector<Span> out;
  RegexImpl& r = *impl_;
  r.input = from_utf8(text);
  r.matcher->reset(r.input);
  // UTF-16 offsets to UTF-8 offsets, walking forward as the matches come in order.
  int32_t at16 = 0;
  std::size_t at8 = 0;
  const auto to8 = [&](int32_t target16) {
    while (at16 < target16) {
      const UChar32 c = r.input.char32At(at16);
      at16 += U16_LENGTH(c);
      at8 += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }
    return at8;
  };
  UErrorCode status = U_ZERO_ERROR;
  while (r.matcher->find(status) && U_SUCCESS(status)) {
    const int32_t s16 = r.matcher->start(status);
    const int32_t e16 = r.matcher->end(status);
    if (U_FAILURE(status)) break;
    const std::size_t s8 = to8(s16);
    out.emplace_back(s8, to8(e16));
  }
  if (U_FAILURE(status)) {
    return bad_input("", "regex", fmt::format("the match stopped ({})", u_errorName(status)));
  }
  return out;
}

std::string normalize(std::string_view text, NormalForm form) {
  if (all_ascii(text)) return std::string(text);  // ASCII is in every normal form
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (form) {
    case NormalForm::nfc:
      n = icu::Normalizer2::getNFCInstance(status);
      break;
    case NormalForm::nfd:
      n = icu::Normalizer2::getNFDInstance(status);
      break;
    case NormalForm::nfkc:
      n = icu::Normalizer2::getNFKCInstance(status);
      break;
    case NormalForm::nfkd:
      n = icu::Normalizer2::getNFKDInstance(status);
      break;
  }
  if (U_FAILURE(status) || n == nullptr) return std::string(text);
  const icu::UnicodeString out = n->normalize(from_utf8(text), status);
  return U_FAILURE(status) ? std::string(text) : to_utf8(out);
}

std::string lowercase_each(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto [c, n] = decode_utf8(text, i);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
    } else {
      icu::UnicodeString one(static_cast<UChar32>(c));
      one.toLower(icu::Locale::getRoot());
      one.toUTF8String(out);
    }
    i += n;
  }
  return out;
}

bool is_white_space(char32_t c) {
  return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0;
}

#else  // no ICU (the web page): the loader refuses every tokenizer.json before these are reached.

struct RegexImpl {};
Regex::Regex(std::unique_ptr<RegexImpl> impl) : impl_(std::move(impl)) {}
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;
Result<Regex> Regex::compile(std::string_view, const std::string& file, const std::string& field) {
  return bad_input(file, field, "this build of trainmem has no ICU to run a regex");
}
Result<std::vector<Span>> Regex::find_all(std::string_view) const {
  return bad_input("", "regex", "this build of trainmem has no ICU to run a regex");
}
std::string normalize(std::string_view text, NormalForm) {
  return std::string(text);
}
std::string lowercase_each(std::string_view text) {
  return std::string(text);
}
bool is_white_space(char32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D);
}

#endif

}  // namespace trainmem::tok

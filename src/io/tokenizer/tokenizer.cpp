// A tokenizer.json's steps run on a text to count its tokens (tokenizer/tokenizer.h), in the
// `tokenizers` library's order (tokenizer/mod.rs encode_single_sequence): added tokens that are
// not normalized are split out of the text; each remaining part is normalized, split at the
// normalized added tokens, pre-tokenized into words, and each word is run through the BPE model.
// Empty parts are dropped at every split (pre_tokenizer.rs PreTokenizedString::split).
#include <fmt/format.h>

#include <algorithm>

#include "io/tokenizer/pipeline.h"

namespace trainmem::tok {
namespace {

// Words counted are cached up to this many (a 100 MB dataset has about a million distinct
// words); past it the cache starts over. Words longer than kMaxCachedWord are not cached.
constexpr std::size_t kMaxCacheEntries = 1 << 20;
constexpr std::size_t kMaxCachedWord = 256;

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto [c, n] = decode_utf8(s, i);
    if (c == 0xFFFD && n == 1) return false;
    i += n;
  }
  return true;
}

std::size_t char_start_before(std::string_view s, std::size_t i) {
  do {
    --i;
  } while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80);
  return i;
}

// A text cut into parts, each an added token or not (added_vocabulary.rs find_matches and
// split_with_indices): at each position the longest token that starts there, scanning left to
// right (aho-corasick's leftmost-longest); lstrip / rstrip widen a match over the white space
// beside it.
std::vector<std::pair<Span, bool>> split_added(std::string_view s, const AddedTokenSet& set) {
  std::vector<std::pair<Span, bool>> out;
  if (set.empty()) {
    out.push_back({{0, s.size()}, false});
    return out;
  }
  std::size_t prev = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    const AddedToken* found = nullptr;
    for (std::uint32_t k : set.by_first_byte[static_cast<unsigned char>(s[i])]) {
      const std::string& c = set.tokens[k].content;
      if (s.compare(i, c.size(), c) == 0) {
        found = &set.tokens[k];
        break;
      }
    }
    if (found == nullptr) {
      ++i;
      continue;
    }
    std::size_t start = i;
    std::size_t end = i + found->content.size();
    if (found->lstrip) {
      while (start > prev) {
        const std::size_t before = char_start_before(s, start);
        if (!is_white_space(decode_utf8(s, before).first)) break;
        start = before;
      }
    }
    if (found->rstrip) {
      while (end < s.size()) {
        const auto [c, n] = decode_utf8(s, end);
        if (!is_white_space(c)) break;
        end += n;
      }
    }
    if (start > prev) out.push_back({{prev, start}, false});
    out.push_back({{start, end}, true});
    prev = end;
    i = end;
  }
  if (prev < s.size()) out.push_back({{prev, s.size()}, false});
  return out;
}

// Every occurrence of `literal`, left to right, not overlapping (str::match_indices).
std::vector<Span> find_literal(std::string_view s, std::string_view literal) {
  std::vector<Span> out;
  if (literal.empty()) return out;
  for (std::size_t at = s.find(literal); at != std::string_view::npos;
       at = s.find(literal, at + literal.size())) {
    out.emplace_back(at, at + literal.size());
  }
  return out;
}

Result<std::vector<Span>> find(const Pattern& p, std::string_view s) {
  if (p.regex) return p.regex->find_all(s);
  return find_literal(s, p.literal);
}

// Each character for which `pred` holds, as its own match (a char-predicate pattern).
template <class Pred>
std::vector<Span> find_chars(std::string_view s, Pred pred) {
  std::vector<Span> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto [c, n] = decode_utf8(s, i);
    if (pred(c)) out.emplace_back(i, i + n);
    i += n;
  }
  return out;
}

// The parts of a text of `size` bytes cut at `matches` under a behaviour
// (normalizer.rs NormalizedString::split): every span, each flagged as a match or not, then
// joined as the behaviour says.
std::vector<Span> split_spans(std::size_t size, const std::vector<Span>& matches,
                              SplitBehavior behavior) {
  std::vector<std::pair<Span, bool>> all;
  std::size_t prev = 0;
  for (const Span& m : matches) {
    if (m.first > prev) all.push_back({{prev, m.first}, false});
    all.push_back({m, true});
    prev = m.second;
  }
  if (prev < size) all.push_back({{prev, size}, false});

  std::vector<Span> out;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::isolated:
      for (const auto& [span, is_match] : all) out.push_back(span);
      break;
    case SplitBehavior::removed:
      for (const auto& [span, is_match] : all) {
        if (!is_match) out.push_back(span);
      }
      break;
    case SplitBehavior::merged_with_previous:
      for (const auto& [span, is_match] : all) {
        if (is_match && !previous_match && !out.empty()) {
          out.back().second = span.second;
        } else {
          out.push_back(span);
        }
        previous_match = is_match;
      }
      break;
    case SplitBehavior::merged_with_next:
      for (auto it = all.rbegin(); it != all.rend(); ++it) {
        const auto& [span, is_match] = *it;
        if (is_match && !previous_match && !out.empty()) {
          out.back().first = span.first;
        } else {
          out.push_back(span);
        }
        previous_match = is_match;
      }
      std::reverse(out.begin(), out.end());
      break;
    case SplitBehavior::contiguous:
      for (const auto& [span, is_match] : all) {
        if (is_match == previous_match && !out.empty()) {
          out.back().second = span.second;
        } else {
          out.push_back(span);
        }
        previous_match = is_match;
      }
      break;
  }
  return out;
}

// `pieces` with each cut by `spans_of` (a piece's spans), empty parts dropped.
template <class SpansOf>
std::optional<Error> resplit(std::vector<Piece>& pieces, SpansOf spans_of) {
  std::vector<Piece> out;
  out.reserve(pieces.size());
  for (Piece& p : pieces) {
    Result<std::vector<Span>> spans = spans_of(p);
    if (!spans) return spans.error();
    for (const Span& s : *spans) {
      if (s.second <= s.first) continue;
      out.push_back({p.text.substr(s.first, s.second - s.first), p.first && s.first == 0});
    }
  }
  pieces = std::move(out);
  return std::nullopt;
}

std::string replace_all(std::string_view s, const std::vector<Span>& matches,
                        std::string_view content) {
  std::string out;
  out.reserve(s.size());
  std::size_t prev = 0;
  for (const Span& m : matches) {
    out.append(s.substr(prev, m.first - prev));
    out.append(content);
    prev = m.second;
  }
  out.append(s.substr(prev));
  return out;
}

std::optional<Error> pre_tokenize(const TokenizerImpl& t, const PreTokenizer& step,
                                  std::vector<Piece>& pieces) {
  switch (step.kind) {
    case PreTokenizerKind::split:
      return resplit(pieces, [&](const Piece& p) -> Result<std::vector<Span>> {
        auto m = find(step.pattern, p.text);
        if (!m) return m.error();
        return split_spans(p.text.size(), *m, step.behavior);
      });
    case PreTokenizerKind::digits:
      // digits.rs: ASCII digits, each alone or in runs.
      return resplit(pieces, [&](const Piece& p) -> Result<std::vector<Span>> {
        return split_spans(
            p.text.size(), find_chars(p.text, [](char32_t c) { return c >= '0' && c <= '9'; }),
            step.individual_digits ? SplitBehavior::isolated : SplitBehavior::contiguous);
      });
    case PreTokenizerKind::metaspace: {
      // metaspace.rs: spaces become the replacement, which is prepended (per prepend_scheme) when
      // the piece does not already start with it; then split before each replacement.
      const char32_t rep = decode_utf8(step.replacement, 0).first;
      for (Piece& p : pieces) {
        p.text = replace_all(p.text, find_literal(p.text, " "), step.replacement);
        const bool starts = p.text.compare(0, step.replacement.size(), step.replacement) == 0;
        const bool prepend = !starts && (step.prepend_scheme == PrependScheme::always ||
                                         (step.prepend_scheme == PrependScheme::first && p.first));
        if (prepend) p.text.insert(0, step.replacement);
      }
      if (!step.split) return std::nullopt;
      return resplit(pieces, [&](const Piece& p) -> Result<std::vector<Span>> {
        return split_spans(p.text.size(), find_chars(p.text, [&](char32_t c) { return c == rep; }),
                           SplitBehavior::merged_with_next);
      });
    }
    case PreTokenizerKind::byte_level: {
      // byte_level.rs: a space prepended to each piece that lacks one, GPT-2's split, then each
      // byte as its printable stand-in.
      if (step.add_prefix_space) {
        for (Piece& p : pieces) {
          if (p.text.empty() || p.text[0] != ' ') p.text.insert(0, " ");
        }
      }
      if (step.use_regex) {
        auto e = resplit(pieces, [&](const Piece& p) -> Result<std::vector<Span>> {
          auto m = t.byte_level_regex->find_all(p.text);
          if (!m) return m.error();
          return split_spans(p.text.size(), *m, SplitBehavior::isolated);
        });
        if (e) return e;
      }
      for (Piece& p : pieces) {
        std::string mapped;
        mapped.reserve(p.text.size() * 2);
        for (char c : p.text) mapped += t.byte_chars[static_cast<unsigned char>(c)];
        p.text = std::move(mapped);
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string run_normalizers(const TokenizerImpl& t, std::string text) {
  for (const Normalizer& n : t.normalizers) {
    switch (n.kind) {
      case NormalizerKind::form:
        text = normalize(text, n.form);
        break;
      case NormalizerKind::lowercase:
        text = lowercase_each(text);
        break;
      case NormalizerKind::prepend:
        if (!text.empty()) text.insert(0, n.text);  // prepend.rs: never onto an empty text
        break;
      case NormalizerKind::replace: {
        auto m = find(n.pattern, text);
        // A regex that runs out of steps replaces nothing; count() reports it from the split.
        if (m) text = replace_all(text, *m, n.text);
        break;
      }
    }
  }
  return text;
}

Tokenizer::Tokenizer(std::unique_ptr<TokenizerImpl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

const std::string& Tokenizer::summary() const {
  return impl_->summary;
}

Result<std::int64_t> Tokenizer::count(std::string_view text) {
  TokenizerImpl& t = *impl_;
  if (!valid_utf8(text)) return bad_input(t.file, "", "the text to count is not UTF-8");
  std::int64_t total = 0;
  for (const auto& [raw, raw_token] : split_added(text, t.raw_tokens)) {
    if (raw_token) {
      ++total;
      continue;
    }
    const std::string normalized =
        run_normalizers(t, std::string(text.substr(raw.first, raw.second - raw.first)));
    for (const auto& [part, token] : split_added(normalized, t.normalized_tokens)) {
      if (token) {
        ++total;
        continue;
      }
      if (part.second <= part.first) continue;
      std::vector<Piece> pieces{{normalized.substr(part.first, part.second - part.first),
                                 raw.first == 0 && part.first == 0}};
      for (const PreTokenizer& step : t.pre_tokenizers) {
        if (auto e = pre_tokenize(t, step, pieces)) {
          return bad_input(t.file, "pre_tokenizer", e->reason);
        }
      }
      for (const Piece& p : pieces) {
        if (p.text.size() > kMaxCachedWord) {
          total += t.model.count_word(p.text);
          continue;
        }
        if (const auto hit = t.cache.find(std::string_view(p.text)); hit != t.cache.end()) {
          total += hit->second;
          continue;
        }
        const std::int64_t n = t.model.count_word(p.text);
        if (t.cache.size() >= kMaxCacheEntries) t.cache.clear();
        t.cache.emplace(p.text, static_cast<std::int32_t>(n));
        total += n;
      }
    }
  }
  return total;
}

}  // namespace trainmem::tok

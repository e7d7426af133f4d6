// A tokenizer.json read into the steps trainmem runs (tokenizer/pipeline.h). The field names and
// defaults are the `tokenizers` library's serde forms (tokenizers/src/normalizers/*.rs,
// pre_tokenizers/*.rs, models/bpe/serialization.rs, tokenizer/added_vocabulary.rs). What is not
// run is an error naming the field and value: the caller keeps the bytes-per-token estimate.
#include <fmt/format.h>

#include <algorithm>

#include "io/json_parse.h"
#include "io/read_file.h"
#include "io/tokenizer/pipeline.h"

namespace trainmem::tok {
namespace {

using nlohmann::json;

struct Reader {
  const std::string& file;

  Error error(const std::string& field, const std::string& reason) const {
    return bad_input(file, field, reason);
  }
  Error unsupported(const std::string& field, const std::string& value,
                    const std::string& runs) const {
    return bad_input(file, field, fmt::format("{} is not run by trainmem ({})", value, runs));
  }

  // A boolean field; absent or null: `fallback`.
  Result<bool> flag(const json& obj, const char* key, const std::string& at, bool fallback) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) return error(at + "." + key, "expected true or false");
    return it->get<bool>();
  }
  // A string field; absent or null: nullopt.
  Result<std::optional<std::string>> text(const json& obj, const char* key,
                                          const std::string& at) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::optional<std::string>{};
    if (!it->is_string()) return error(at + "." + key, "expected a string");
    return std::optional<std::string>{it->get<std::string>()};
  }
  Result<std::string> type_of(const json& obj, const std::string& at) const {
    if (!obj.is_object()) return error(at, "expected an object");
    auto t = text(obj, "type", at);
    if (!t) return t.error();
    if (!*t) return error(at + ".type", "missing");
    return **t;
  }

  // {"String": "..."} or {"Regex": "..."}.
  Result<Pattern> pattern(const json& obj, const std::string& at) const {
    const std::string field = at + ".pattern";
    const auto it = obj.find("pattern");
    if (it == obj.end() || !it->is_object() || it->size() != 1) {
      return error(field, "expected {\"String\": ...} or {\"Regex\": ...}");
    }
    const std::string kind = it->begin().key();
    const json& value = it->begin().value();
    if (!value.is_string()) return error(field + "." + kind, "expected a string");
    const std::string& s = value.get_ref<const std::string&>();
    if (static_cast<std::int64_t>(s.size()) > kMaxPatternBytes) {
      return error(field + "." + kind,
                   fmt::format("{} bytes long; trainmem reads patterns of up to {}", s.size(),
                               kMaxPatternBytes));
    }
    if (kind == "String") return Pattern{s, nullptr};
    if (kind == "Regex") {
      auto r = Regex::compile(s, file, field + ".Regex");
      if (!r) return r.error();
      return Pattern{"", std::make_shared<Regex>(std::move(r).value())};
    }
    return error(field, fmt::format("\"{}\" is neither \"String\" nor \"Regex\"", kind));
  }

  std::optional<Error> normalizer(const json& n, const std::string& at,
                                  std::vector<Normalizer>& out) const {
    if (n.is_null()) return std::nullopt;
    auto type = type_of(n, at);
    if (!type) return type.error();
    const std::string& t = *type;
    if (t == "Sequence") {
      const auto list = n.find("normalizers");
      if (list == n.end() || !list->is_array()) {
        return error(at + ".normalizers", "expected a list");
      }
      for (std::size_t i = 0; i < list->size(); ++i) {
        if (auto e = normalizer((*list)[i], fmt::format("{}.normalizers[{}]", at, i), out)) {
          return e;
        }
      }
      return std::nullopt;
    }
    for (const auto& [name, form] :
         {std::pair{"NFC", NormalForm::nfc}, std::pair{"NFD", NormalForm::nfd},
          std::pair{"NFKC", NormalForm::nfkc}, std::pair{"NFKD", NormalForm::nfkd}}) {
      if (t == name) {
        out.push_back({NormalizerKind::form, form, "", {}});
        return std::nullopt;
      }
    }
    if (t == "Lowercase") {
      out.push_back({NormalizerKind::lowercase, NormalForm::nfc, "", {}});
      return std::nullopt;
    }
    if (t == "Prepend") {
      auto p = text(n, "prepend", at);
      if (!p) return p.error();
      if (!*p) return error(at + ".prepend", "missing");
      out.push_back({NormalizerKind::prepend, NormalForm::nfc, **p, {}});
      return std::nullopt;
    }
    if (t == "Replace") {
      auto p = pattern(n, at);
      if (!p) return p.error();
      auto c = text(n, "content", at);
      if (!c) return c.error();
      if (!*c) return error(at + ".content", "missing");
      out.push_back({NormalizerKind::replace, NormalForm::nfc, **c, std::move(*p)});
      return std::nullopt;
    }
    return unsupported(at + ".type", "\"" + t + "\"",
                       "normalizers run: NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, "
                       "Sequence");
  }

  std::optional<Error> pre_tokenizer(const json& p, const std::string& at,
                                     std::vector<PreTokenizer>& out) const {
    if (p.is_null()) return std::nullopt;
    auto type = type_of(p, at);
    if (!type) return type.error();
    const std::string& t = *type;
    PreTokenizer step;
    if (t == "Sequence") {
      const auto list = p.find("pretokenizers");
      if (list == p.end() || !list->is_array()) {
        return error(at + ".pretokenizers", "expected a list");
      }
      for (std::size_t i = 0; i < list->size(); ++i) {
        if (auto e = pre_tokenizer((*list)[i], fmt::format("{}.pretokenizers[{}]", at, i), out)) {
          return e;
        }
      }
      return std::nullopt;
    }
    if (t == "ByteLevel") {
      // byte_level.rs: add_prefix_space and use_regex default to true.
      auto prefix = flag(p, "add_prefix_space", at, true);
      if (!prefix) return prefix.error();
      auto regex = flag(p, "use_regex", at, true);
      if (!regex) return regex.error();
      step.kind = PreTokenizerKind::byte_level;
      step.add_prefix_space = *prefix;
      step.use_regex = *regex;
    } else if (t == "Split") {
      auto pat = pattern(p, at);
      if (!pat) return pat.error();
      auto invert = flag(p, "invert", at, false);
      if (!invert) return invert.error();
      if (*invert) return unsupported(at + ".invert", "true", "Split runs with invert false");
      auto behavior = text(p, "behavior", at);
      if (!behavior) return behavior.error();
      const std::string b = behavior->value_or("");
      if (b == "Isolated") {
        step.behavior = SplitBehavior::isolated;
      } else if (b == "Removed") {
        step.behavior = SplitBehavior::removed;
      } else if (b == "MergedWithPrevious") {
        step.behavior = SplitBehavior::merged_with_previous;
      } else if (b == "MergedWithNext") {
        step.behavior = SplitBehavior::merged_with_next;
      } else if (b == "Contiguous") {
        step.behavior = SplitBehavior::contiguous;
      } else {
        return error(at + ".behavior", fmt::format("\"{}\" is not a Split behaviour", b));
      }
      step.kind = PreTokenizerKind::split;
      step.pattern = std::move(*pat);
    } else if (t == "Metaspace") {
      auto r = text(p, "replacement", at);
      if (!r) return r.error();
      if (!*r || (*r)->empty()) return error(at + ".replacement", "missing");
      if (decode_utf8(**r, 0).second != (*r)->size()) {
        return error(at + ".replacement", "expected one character");
      }
      step.kind = PreTokenizerKind::metaspace;
      step.replacement = **r;
      // metaspace.rs: prepend_scheme "always" | "first" | "never"; older files say
      // add_prefix_space (true: always) and split at every replacement.
      auto scheme = text(p, "prepend_scheme", at);
      if (!scheme) return scheme.error();
      if (*scheme) {
        if (**scheme == "always") {
          step.prepend_scheme = PrependScheme::always;
        } else if (**scheme == "first") {
          step.prepend_scheme = PrependScheme::first;
        } else if (**scheme == "never") {
          step.prepend_scheme = PrependScheme::never;
        } else {
          return error(at + ".prepend_scheme",
                       fmt::format("\"{}\" is not always, first or never", **scheme));
        }
      } else {
        auto prefix = flag(p, "add_prefix_space", at, true);
        if (!prefix) return prefix.error();
        step.prepend_scheme = *prefix ? PrependScheme::always : PrependScheme::never;
      }
      auto split = flag(p, "split", at, true);
      if (!split) return split.error();
      step.split = *split;
    } else if (t == "Digits") {
      auto individual = flag(p, "individual_digits", at, false);
      if (!individual) return individual.error();
      step.kind = PreTokenizerKind::digits;
      step.individual_digits = *individual;
    } else {
      return unsupported(at + ".type", "\"" + t + "\"",
                         "pre-tokenizers run: ByteLevel, Split, Metaspace, Digits, Sequence");
    }
    out.push_back(std::move(step));
    return std::nullopt;
  }

  std::optional<Error> model(const json& m, BpeModel& out) const {
    if (!m.is_object()) return error("model", "expected an object");
    auto type = text(m, "type", "model");
    if (!type) return type.error();
    // Files written before `type` was serialised are BPE when they hold merges.
    const std::string t = type->value_or(m.contains("merges") ? "BPE" : "");
    if (t != "BPE") {
      return unsupported("model.type", "\"" + t + "\"", "trainmem runs BPE models only");
    }
    if (const auto d = m.find("dropout"); d != m.end() && !d->is_null()) {
      if (!d->is_number() || d->get<double>() != 0.0) {
        return unsupported("model.dropout", d->dump(), "BPE dropout is random; null only");
      }
    }
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      auto v = text(m, key, "model");
      if (!v) return v.error();
      if (*v && !(*v)->empty()) {
        return unsupported(std::string("model.") + key, "\"" + **v + "\"", "null only");
      }
    }
    for (auto [key, dest] :
         {std::pair{"fuse_unk", &out.fuse_unk}, std::pair{"byte_fallback", &out.byte_fallback},
          std::pair{"ignore_merges", &out.ignore_merges}}) {
      auto v = flag(m, key, "model", false);
      if (!v) return v.error();
      *dest = *v;
    }
    const auto vocab = m.find("vocab");
    if (vocab == m.end() || !vocab->is_object()) return error("model.vocab", "expected an object");
    if (static_cast<std::int64_t>(vocab->size()) > kMaxVocabTokens) {
      return error("model.vocab", fmt::format("holds {} tokens; trainmem reads up to {}",
                                              vocab->size(), kMaxVocabTokens));
    }
    out.vocab.reserve(vocab->size());
    for (const auto& [token, id] : vocab->items()) {
      if (!id.is_number_unsigned() || id.get<std::uint64_t>() > 0xFFFFFFFFu) {
        return error("model.vocab." + token, "expected a token id (a whole number)");
      }
      out.vocab.emplace(token, static_cast<std::uint32_t>(id.get<std::uint64_t>()));
    }
    for (int b = 0; b < 256; ++b) {
      if (const auto it = out.vocab.find(fmt::format("<0x{:02X}>", b)); it != out.vocab.end()) {
        out.byte_ids[static_cast<std::size_t>(b)] = it->second;
      }
    }
    auto unk = text(m, "unk_token", "model");
    if (!unk) return unk.error();
    if (*unk) {
      const auto it = out.vocab.find(**unk);
      if (it == out.vocab.end()) return error("model.unk_token", "is not in the vocabulary");
      out.unk_id = it->second;
    }
    const auto merges = m.find("merges");
    if (merges == m.end() || !merges->is_array()) {
      return error("model.merges", "expected a list");
    }
    out.merges.reserve(merges->size());
    for (std::size_t i = 0; i < merges->size(); ++i) {
      const json& entry = (*merges)[i];
      const std::string at = fmt::format("model.merges[{}]", i);
      std::string left, right;
      // "a b" (older files) or ["a", "b"] (tokenizers >= 0.20).
      if (entry.is_string()) {
        const std::string& s = entry.get_ref<const std::string&>();
        const std::size_t space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
          return error(at, "expected two tokens separated by one space");
        }
        left = s.substr(0, space);
        right = s.substr(space + 1);
      } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() &&
                 entry[1].is_string()) {
        left = entry[0].get<std::string>();
        right = entry[1].get<std::string>();
      } else {
        return error(at, "expected \"a b\" or [\"a\", \"b\"]");
      }
      const auto l = out.vocab.find(left);
      const auto r = out.vocab.find(right);
      const auto merged = out.vocab.find(left + right);
      if (l == out.vocab.end() || r == out.vocab.end() || merged == out.vocab.end()) {
        return error(at, "a merge of tokens that are not in the vocabulary");
      }
      // A merge's rank is its line; a pair listed twice keeps its last line, as the library's
      // map collected from the list does (models/bpe/model.rs, BpeBuilder::build).
      out.merges.insert_or_assign(pair_key(l->second, r->second),
                                  Merge{static_cast<std::uint32_t>(i), merged->second});
    }
    return std::nullopt;
  }
};

void index_tokens(AddedTokenSet& set) {
  for (auto& list : set.by_first_byte) list.clear();
  for (std::uint32_t i = 0; i < set.tokens.size(); ++i) {
    set.by_first_byte[static_cast<unsigned char>(set.tokens[i].content[0])].push_back(i);
  }
  for (auto& list : set.by_first_byte) {
    std::stable_sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
      return set.tokens[a].content.size() > set.tokens[b].content.size();
    });
  }
}

// GPT-2's bytes_to_unicode (openai/gpt-2 src/encoder.py; byte_level.rs bytes_char): printable
// bytes map to themselves, the others to U+0100 upwards in byte order.
std::array<std::string, 256> byte_level_chars() {
  std::array<std::string, 256> out;
  const auto utf8 = [](char32_t c) {
    std::string s;
    if (c < 0x80) {
      s.push_back(static_cast<char>(c));
    } else {
      s.push_back(static_cast<char>(0xC0 | (c >> 6)));
      s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
    return s;
  };
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool kept = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    out[static_cast<std::size_t>(b)] = utf8(kept ? static_cast<char32_t>(b) : next++);
  }
  return out;
}

std::string describe(const std::vector<PreTokenizer>& steps) {
  std::string out;
  for (const PreTokenizer& p : steps) {
    if (!out.empty()) out += ", ";
    switch (p.kind) {
      case PreTokenizerKind::byte_level:
        out += "ByteLevel";
        break;
      case PreTokenizerKind::split:
        out += "Split";
        break;
      case PreTokenizerKind::metaspace:
        out += "Metaspace";
        break;
      case PreTokenizerKind::digits:
        out += "Digits";
        break;
    }
  }
  return out.empty() ? "none" : out;
}

}  // namespace

// The GPT-2 pattern ByteLevel splits with when use_regex is true (byte_level.rs).
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Runs the normalizers on a normalized added token's content (tokenizer.cpp).
std::string run_normalizers(const TokenizerImpl& t, std::string text);

bool tokenizers_supported() {
#if TRAINMEM_HAVE_ICU
  return true;
#else
  return false;
#endif
}

Result<Tokenizer> load_tokenizer(std::string_view json_text, const std::string& file) {
  if (!tokenizers_supported()) {
    return bad_input(file, "", "this build of trainmem has no ICU to run a tokenizer");
  }
  if (static_cast<std::int64_t>(json_text.size()) > kMaxTokenizerBytes) {
    return bad_input(file, "", fmt::format("is larger than {} MiB", kMaxTokenizerBytes >> 20));
  }
  auto parsed = io::parse_json(json_text, file);
  if (!parsed) return parsed.error();
  const json& j = *parsed;
  if (!j.is_object()) return bad_input(file, "", "expected a JSON object (a tokenizer.json)");
  const Reader r{file};
  auto impl = std::make_unique<TokenizerImpl>();
  impl->file = file;
  const auto model = j.find("model");
  if (model == j.end()) return bad_input(file, "model", "missing");
  if (auto e = r.model(*model, impl->model)) return *e;
  if (const auto n = j.find("normalizer"); n != j.end()) {
    if (auto e = r.normalizer(*n, "normalizer", impl->normalizers)) return *e;
  }
  if (const auto p = j.find("pre_tokenizer"); p != j.end()) {
    if (auto e = r.pre_tokenizer(*p, "pre_tokenizer", impl->pre_tokenizers)) return *e;
  }
  for (const PreTokenizer& p : impl->pre_tokenizers) {
    if (p.kind == PreTokenizerKind::byte_level && p.use_regex && !impl->byte_level_regex) {
      auto re = Regex::compile(kGpt2Pattern, file, "pre_tokenizer (ByteLevel use_regex)");
      if (!re) return re.error();
      impl->byte_level_regex = std::make_shared<Regex>(std::move(re).value());
    }
  }
  impl->byte_chars = byte_level_chars();

  std::int64_t added = 0;
  if (const auto list = j.find("added_tokens"); list != j.end() && !list->is_null()) {
    if (!list->is_array()) return bad_input(file, "added_tokens", "expected a list");
    if (static_cast<std::int64_t>(list->size()) > kMaxAddedTokens) {
      return bad_input(
          file, "added_tokens",
          fmt::format("holds {} tokens; trainmem reads up to {}", list->size(), kMaxAddedTokens));
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      const json& a = (*list)[i];
      const std::string at = fmt::format("added_tokens[{}]", i);
      if (!a.is_object()) return bad_input(file, at, "expected an object");
      auto content = r.text(a, "content", at);
      if (!content) return content.error();
      if (!*content || (*content)->empty()) return bad_input(file, at + ".content", "missing");
      auto special = r.flag(a, "special", at, false);
      if (!special) return special.error();
      // added_vocabulary.rs: `normalized` defaults to the opposite of `special`.
      auto normalized = r.flag(a, "normalized", at, !*special);
      auto single_word = r.flag(a, "single_word", at, false);
      auto lstrip = r.flag(a, "lstrip", at, false);
      auto rstrip = r.flag(a, "rstrip", at, false);
      for (const auto* v : {&normalized, &single_word, &lstrip, &rstrip}) {
        if (!*v) return v->error();
      }
      if (*single_word) {
        return r.unsupported(at + ".single_word", "true",
                             "added tokens run with single_word "
                             "false");
      }
      AddedToken token{**content, *lstrip, *rstrip};
      if (*normalized) {
        token.content = run_normalizers(*impl, token.content);
        if (token.content.empty()) continue;
        impl->normalized_tokens.tokens.push_back(std::move(token));
      } else {
        impl->raw_tokens.tokens.push_back(std::move(token));
      }
      ++added;
    }
  }
  index_tokens(impl->raw_tokens);
  index_tokens(impl->normalized_tokens);
  impl->summary =
      fmt::format("BPE{}, {} tokens and {} added, {} normalizer{}, pre-tokenizers: {}",
                  impl->model.byte_fallback ? " with byte fallback" : "", impl->model.vocab.size(),
                  added, impl->normalizers.size(), impl->normalizers.size() == 1 ? "" : "s",
                  describe(impl->pre_tokenizers));
  return Tokenizer(std::move(impl));
}

Result<Tokenizer> load_tokenizer_file(const std::string& path) {
  auto text = io::read_regular_file(path, kMaxTokenizerBytes, "a tokenizer.json");
  if (!text) return text.error();
  return load_tokenizer(*text, path);
}

}  // namespace trainmem::tok

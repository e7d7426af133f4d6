// The steps of a tokenizer.json that trainmem runs, as load.cpp reads them and tokenizer.cpp runs
// them (the `tokenizers` library's normalizers/, pre_tokenizers/ and added_vocabulary.rs).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/tokenizer/bpe.h"
#include "io/tokenizer/tokenizer.h"
#include "io/tokenizer/unicode.h"

namespace trainmem::tok {

// A string pattern (matched literally) or a regex, as a Split pre-tokenizer or a Replace
// normalizer holds it: {"String": " "} or {"Regex": "\\s+"}.
struct Pattern {
  std::string literal;
  std::shared_ptr<Regex> regex;  // null: `literal`
};

enum class NormalizerKind { form, prepend, replace, lowercase };
struct Normalizer {
  NormalizerKind kind = NormalizerKind::form;
  NormalForm form = NormalForm::nfc;
  std::string text;  // prepend: the prefix; replace: the content
  Pattern pattern;   // replace
};

// normalizer.rs SplitDelimiterBehavior.
enum class SplitBehavior { isolated, removed, merged_with_previous, merged_with_next, contiguous };
// pre_tokenizers/metaspace.rs PrependScheme.
enum class PrependScheme { always, first, never };

enum class PreTokenizerKind { byte_level, split, metaspace, digits };
struct PreTokenizer {
  PreTokenizerKind kind = PreTokenizerKind::byte_level;
  bool add_prefix_space = false;  // byte_level
  bool use_regex = true;          // byte_level: GPT-2's split first
  Pattern pattern;                // split
  SplitBehavior behavior = SplitBehavior::isolated;
  std::string replacement;  // metaspace, UTF-8
  PrependScheme prepend_scheme = PrependScheme::always;
  bool split = true;               // metaspace
  bool individual_digits = false;  // digits
};

struct AddedToken {
  std::string content;
  bool lstrip = false;
  bool rstrip = false;
};

// Added tokens matched as the library's AddedVocabulary does: leftmost, then longest.
struct AddedTokenSet {
  std::vector<AddedToken> tokens;
  // Token indices by first byte, longest first.
  std::array<std::vector<std::uint32_t>, 256> by_first_byte;
  bool empty() const { return tokens.empty(); }
};

struct TokenizerImpl {
  std::string file;
  std::string summary;
  AddedTokenSet raw_tokens;         // "normalized": false: matched on the text as given
  AddedTokenSet normalized_tokens;  // "normalized": true: matched after the normalizers
  std::vector<Normalizer> normalizers;
  std::vector<PreTokenizer> pre_tokenizers;
  std::shared_ptr<Regex> byte_level_regex;  // GPT-2's pattern, when a ByteLevel uses it
  std::array<std::string, 256> byte_chars;  // GPT-2's bytes_to_unicode, as UTF-8
  BpeModel model;
  // Words already counted (a dataset repeats its words); cleared when it grows past a cap.
  std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> cache;
};

// Text pieces with whether each starts where the original text did (Metaspace's "first").
struct Piece {
  std::string text;
  bool first = false;
};

}  // namespace trainmem::tok

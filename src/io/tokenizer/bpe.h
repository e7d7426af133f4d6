// The BPE model of a tokenizer.json: a word's symbols (its characters, or their bytes as <0xXX>
// tokens under byte fallback, or the unknown token) merged pair by pair, the lowest-ranked merge
// first and the leftmost of equal ranks, until no merge applies (Sennrich et al. 2016,
// arXiv:1508.07909; the `tokenizers` library's models/bpe/model.rs merge_word and word.rs
// merge_all). Pure C++: no ICU.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace trainmem::tok {

// Heterogeneous lookup: find a std::string key by string_view without building a string.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using Vocab = std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>;

struct Merge {
  std::uint32_t rank = 0;    // the merge's line in the file: lower merges first
  std::uint32_t result = 0;  // the merged token's id
};

struct BpeModel {
  Vocab vocab;
  std::unordered_map<std::uint64_t, Merge> merges;  // key: left id << 32 | right id
  std::optional<std::uint32_t> unk_id;              // unk_token's id
  bool fuse_unk = false;                            // consecutive unknowns make one token
  bool byte_fallback = false;                       // an unknown character as <0xXX> tokens
  bool ignore_merges = false;                       // a word that is in the vocabulary is one token
  std::array<std::optional<std::uint32_t>, 256> byte_ids;  // <0x00> .. <0xFF>

  // The tokens `word` encodes to.
  std::int64_t count_word(std::string_view word) const;
};

inline std::uint64_t pair_key(std::uint32_t left, std::uint32_t right) {
  return (std::uint64_t{left} << 32) | right;
}

}  // namespace trainmem::tok

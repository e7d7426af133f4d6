// A Hugging Face tokenizer.json (the `tokenizers` library's serialisation) run to count tokens
// exactly, for the BPE tokenizers of current LLMs: byte-level BPE behind a regex split (GPT-2,
// Llama 3, Qwen2/2.5/3, Mistral-Nemo, Phi-4) and SentencePiece-style BPE with byte fallback
// (Llama 2, Mistral 7B, Phi-3). What the reader does not run (Unigram, WordPiece, an unknown
// normalizer) is an error naming the file, the field and the value, never an approximation:
// the caller then keeps the bytes-per-token estimate. docs/dataset.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "trainmem/errors.h"

namespace trainmem::tok {

// Caps on what a tokenizer.json may hold: real files are under 20 MiB (Qwen2's is 7 MB, Gemma's
// 34 MB; 64 MiB leaves room) with vocabularies under 300,000 tokens.
inline constexpr std::int64_t kMaxTokenizerBytes = std::int64_t{64} << 20;
inline constexpr std::int64_t kMaxVocabTokens = 2'000'000;
inline constexpr std::int64_t kMaxAddedTokens = 100'000;
inline constexpr std::int64_t kMaxPatternBytes = 4096;  // a regex in the file

struct TokenizerImpl;

// A loaded tokenizer; counting keeps a cache of words seen, so it is not shared across threads.
class Tokenizer {
 public:
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The tokens `text` (UTF-8) encodes to, as `Tokenizer.encode(text, add_special_tokens=False)`
  // gives them: added tokens matched first, then normalizers, pre-tokenizers and the BPE model.
  // The post-processor's tokens (BOS/EOS) are not counted.
  Result<std::int64_t> count(std::string_view text);

  // "BPE, 128,256 tokens, pre-tokenizer Sequence[Split, ByteLevel]" for the report.
  const std::string& summary() const;

 private:
  friend Result<Tokenizer> load_tokenizer(std::string_view, const std::string&);
  explicit Tokenizer(std::unique_ptr<TokenizerImpl> impl);
  std::unique_ptr<TokenizerImpl> impl_;
};

// The tokenizer in a tokenizer.json's text; `file` names it in errors. An error says which field
// holds what the reader does not run (or what is malformed), so the caller can fall back.
Result<Tokenizer> load_tokenizer(std::string_view json_text, const std::string& file);

// The file read (a regular file of at most kMaxTokenizerBytes) and loaded.
Result<Tokenizer> load_tokenizer_file(const std::string& path);

// False where trainmem was built without ICU (the web page): every load is then an error.
bool tokenizers_supported();

}  // namespace trainmem::tok

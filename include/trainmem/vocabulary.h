// The vocabulary of a plan: for each enumerated setting, its canonical names and the spellings the
// ecosystem uses for the same thing (PEFT module names, the HF Trainer's `optim` strings,
// `attn_implementation` values, Lightning precision names). One table per setting, defined in
// src/plan/vocabulary.cpp; the command line's parsing, its help text, the JSON, the importers of
// other tools' configs and docs/formats.md all read these tables.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/errors.h"

namespace trainmem {

struct Term {
  std::string name;                  // canonical: printed in reports and JSON
  std::vector<std::string> aliases;  // other spellings accepted as this term
  std::string meaning;               // one line for help and docs
};

struct Vocabulary {
  std::string flag;  // "--optimizer": named in errors
  std::vector<Term> terms;
};

// Matching ignores case and treats '_' and '-' alike (adamw_8bit = adamw-8bit = AdamW-8bit).
const Term* find_term(const Vocabulary& vocabulary, std::string_view text);
// The term `text` names, or a usage error naming the flag, the nearest names ("did you mean")
// and everything accepted.
Result<const Term*> resolve_term(const Vocabulary& vocabulary, std::string_view text);
// "full, lora, qlora, freeze": canonical names only.
std::string canonical_names(const Vocabulary& vocabulary);
// "full | lora | qlora (aliases: ...)": canonical names, then every alias, for --help.
std::string help_names(const Vocabulary& vocabulary);

const Vocabulary& method_vocabulary();
const Vocabulary& precision_vocabulary();
const Vocabulary& optimizer_vocabulary();
const Vocabulary& optimizer_impl_vocabulary();
const Vocabulary& checkpointing_vocabulary();
const Vocabulary& attention_vocabulary();
const Vocabulary& loss_vocabulary();
const Vocabulary& convention_vocabulary();
const Vocabulary& quant_vocabulary();
const Vocabulary& eval_strategy_vocabulary();
const Vocabulary& framework_vocabulary();
// LoRA target names (--lora-targets) with PEFT's module names (q_proj, gate_proj, ...) as aliases;
// --train-modules accepts these and "norm".
const Vocabulary& lora_target_vocabulary();

// The --optimizer-impl an HF `optim` string implies (adamw_torch_fused: "fused"; adamw_torch:
// "foreach"); nullopt when the spelling says nothing about the implementation.
std::optional<std::string_view> implied_optimizer_impl(std::string_view optimizer_text);

// Every vocabulary, in the order docs/formats.md lists them.
std::vector<const Vocabulary*> all_vocabularies();

// "24 GB" style counts of tokens: "4k" = 4,096, "32K" = 32,768, "1m" = 1,048,576 (context lengths
// are powers of two: Qwen's "32k context" is max_position_embeddings 32768), or a plain integer.
Result<std::int64_t> parse_tokens(std::string_view text, const std::string& field);

}  // namespace trainmem

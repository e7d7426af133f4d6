// The formats --from reads (trainmem/import.h). Each format lives in its own file and is a list of
// rules: a key of the file, the plan setting it becomes, and how its value converts.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/import.h"
#include "trainmem/plan.h"

namespace trainmem::io {

// A config flattened to dotted keys ("zero_optimization.stage", "model.lora_rank") with every
// scalar as text and lists joined with commas.
using FlatConfig = std::map<std::string, std::string>;

// flatten_config joins a list with commas ("q_proj,v_proj") and marks its key with a second key,
// the key plus this suffix, so that a setting taking one value refuses `batch_size: [2]` instead
// of reading it as 2. The importer skips the marks.
inline constexpr std::string_view kListMark = "\x1f[]";

// One key of a format. `convert` turns the file's value into the setting's value; nullopt means
// the key was read and says nothing for the plan (bf16: false). Setting "model" names the model.
struct ImportRule {
  std::string key;
  std::string setting;
  std::function<std::optional<std::string>(const std::string& value)> convert;
  std::string why_ignored;  // non-empty: the key is known but not priced, and this says why
  // Non-empty: what the tool does when the file sets the key to null, said in the used list
  // instead of "(no change)" (torchtune's max_seq_len: null truncates nothing).
  std::string when_unset = "";
  // A not-priced key's value that asks for nothing (PEFT's bias "none"): read as "(no change)",
  // as null is, rather than listed as ignored.
  std::string inert = "";
  // A boolean key: a value that is neither true nor false (nor null/"auto") is an error naming the
  // key, as the tool's own argument parser refuses it, not a silent "no change".
  bool boolean = false;
};

struct ImportFormat {
  std::string name;  // "TRL SFTConfig / TrainingArguments"
  // How well the flattened file looks like this format (0: not at all); the best score wins.
  std::function<int(const FlatConfig&)> detect;
  std::vector<ImportRule> rules;
  // Keys that only mean something together (torchtune's apply_lora_to_mlp extends
  // lora_attn_modules): run after the rules, may edit the result. May be empty.
  std::function<void(const FlatConfig&, ImportedConfig&)> finish;
  // Combinations the tool itself refuses to start with (axolotl's adapter: qlora without
  // load_in_4bit): an error naming the file and key, rather than a plan for a run that never
  // starts. May be empty.
  std::function<std::optional<Error>(const FlatConfig&, const std::string& file)> refuse = nullptr;
};

const ImportFormat& trl_format();
const ImportFormat& peft_format();
const ImportFormat& bitsandbytes_format();
const ImportFormat& axolotl_format();
const ImportFormat& llama_factory_format();
const ImportFormat& torchtune_format();
const ImportFormat& deepspeed_format();
const ImportFormat& accelerate_format();

// A JSON or YAML mapping (by content) flattened to dotted keys; an error names the file. The
// distributed importers (io/import/dist) read accelerate YAML through it too.
Result<FlatConfig> flatten_config(const std::string& text, const std::string& file);

// Shared value converters for the format files.
std::optional<std::string> if_true(const std::string& value, const std::string& setting_value);
// An error naming the second key when a file sets two keys no tool runs together (bf16 and fp16).
std::optional<Error> refuse_exclusive_pair(const FlatConfig& c, const std::string& file);
// YAML 1.1 booleans as PyYAML's safe_load reads them (HfArgumentParser, axolotl, torchtune load
// configs with it), case-insensitively: true, yes, on (and 1) / false, no, off (and 0).
bool is_true(const std::string& value);
bool is_false(const std::string& value);
// "auto" (DeepSpeed/accelerate: filled in by the HF Trainer) and null say nothing.
bool is_unset(const std::string& value);

}  // namespace trainmem::io

// Importing the configs users already have (--from FILE): TRL SFTConfig / HF TrainingArguments,
// PEFT adapter_config.json, BitsAndBytesConfig / quantization_config, axolotl, LLaMA-Factory,
// torchtune, DeepSpeed and accelerate (src/io/import/, one file per format). The result is a
// plan patch, applied before the command line's flags, and the keys used and ignored.
#pragma once

#include <string>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/plan_settings.h"

namespace trainmem {

struct ImportedConfig {
  std::string file;
  std::string format;
  PlanPatch patch;                   // origin "FILE: key", from_file = true
  std::string model;                 // the model the file names, or empty
  std::vector<std::string> used;     // "key -> setting"
  std::vector<std::string> ignored;  // "key (why)"
};

// Reads JSON or YAML (by content, not extension), flattens it and applies the best-matching
// format's rules. An unrecognised file is an error naming the formats tried.
Result<ImportedConfig> import_config(const std::string& path);
// The same on text already read; `file` names it.
Result<ImportedConfig> import_config_text(const std::string& text, const std::string& file);

}  // namespace trainmem

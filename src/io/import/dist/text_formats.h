// Small readers shared by the config importers: "[section] key = value" TOML (YAML goes through
// yaml-cpp: io::flatten_config), and shell launch lines (continuations joined, comments dropped).
// They read the subsets the emitters write and hand-edited files of the same shape; anything
// else is reported by the importer that asked for a key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainmem/errors.h"

namespace trainmem::import {

// "section.key" -> value (YAML: "fsdp_config.fsdp_version"; TOML: "parallelism.tp"). Quotes
// stripped.
using Keys = std::map<std::string, std::string>;
Keys read_toml(const std::string& text);

// The words of the launch command(s) in a shell script.
std::vector<std::string> read_command_words(const std::string& text);
// The value after `--flag` (or `--flag=value`); nullopt when absent.
std::optional<std::string> flag_value(const std::vector<std::string>& words,
                                      const std::string& flag);
bool has_flag(const std::vector<std::string>& words, const std::string& flag);

// Integer / boolean fields with a one-line error naming file and key.
Result<std::int64_t> as_int(const std::string& file, const std::string& key, const std::string& v);
Result<bool> as_bool(const std::string& file, const std::string& key, const std::string& v);

}  // namespace trainmem::import

// The one JSON parser entry for files and user text: syntax errors, numbers out of range (1e400),
// and nesting past a depth cap all become one-line errors; nothing throws past here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "trainmem/errors.h"

namespace trainmem::io {

// Configs nest a few levels (text_config, rope_scaling); 64 is far past any real file and far
// below what would exhaust the stack when the value is destroyed or printed.
inline constexpr int kMaxJsonDepth = 64;

// `file` names the source in errors; `field` the JSON path when parsing a nested value.
Result<nlohmann::json> parse_json(std::string_view text, const std::string& file,
                                  const std::string& field = "");

}  // namespace trainmem::io

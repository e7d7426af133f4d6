// JSON text that is always safe to print: invalid UTF-8 is replaced (U+FFFD) rather than thrown
// on (nlohmann's dump throws type_error 316 by default), and excerpts in error messages are
// truncated, so an error never prints unbounded input.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace trainmem {

// j.dump(indent) with invalid UTF-8 replaced.
inline std::string safe_dump(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// At most `limit` characters of the value's JSON text, with "..." when cut. Containers deeper
// than the parse depth cap never reach here (io/json_parse.h), so the dump is bounded too.
inline std::string json_excerpt(const nlohmann::json& j, std::size_t limit = 60) {
  std::string text = safe_dump(j);
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return text;
}

// A string from a file or the command line, cut to `limit` bytes for an error message.
inline std::string text_excerpt(const std::string& s, std::size_t limit = 80) {
  return s.size() > limit ? s.substr(0, limit) + "..." : s;
}

}  // namespace trainmem

#include "io/json_parse.h"

#include <fmt/format.h>

namespace trainmem::io {

namespace {

// Byte offset where nesting first passes kMaxJsonDepth, or npos. Brackets inside strings do not
// count; the scan is linear and keeps no stack.
std::size_t too_deep_at(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

Result<nlohmann::json> parse_json(std::string_view text, const std::string& file,
                                  const std::string& field) {
  if (const std::size_t at = too_deep_at(text); at != std::string_view::npos) {
    return bad_input(
        file, field,
        fmt::format("nested more than {} levels deep (at byte {})", kMaxJsonDepth, at));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return bad_input(file, field, fmt::format("not valid JSON (near byte {})", e.byte));
  } catch (const nlohmann::json::out_of_range&) {
    // nlohmann reports a number past double's range (1e400) as out_of_range 406.
    return bad_input(file, field, "holds a number out of range (past 1.8e308)");
  } catch (const nlohmann::json::exception& e) {
    return bad_input(file, field, fmt::format("cannot be read as JSON (error {})", e.id));
  }
}

}  // namespace trainmem::io

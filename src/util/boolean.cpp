#include "util/boolean.h"

#include <cctype>
#include <string>

namespace trainmem {

std::optional<bool> parse_boolean(std::string_view text) {
  std::string v(text);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return std::nullopt;
}

}  // namespace trainmem

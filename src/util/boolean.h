// A boolean as users and config files spell it (PyYAML safe_load's YAML 1.1 words, any case).
#pragma once

#include <optional>
#include <string_view>

namespace trainmem {

// true, yes, on, 1 / false, no, off, 0 in any case; anything else is nullopt.
std::optional<bool> parse_boolean(std::string_view text);

}  // namespace trainmem

// Small helpers for writing a format's rules.
#pragma once

#include <string>

#include "io/import/formats.h"

namespace trainmem::io::rules {

// The value as it is: the plan setting understands the tool's spelling (vocabulary.h aliases).
inline ImportRule same(std::string key, std::string setting) {
  return {std::move(key), std::move(setting), [](const std::string& v) { return std::optional(v); },
          ""};
}
// A boolean key: true sets `setting` to `value`, false says nothing.
inline ImportRule when_true(std::string key, std::string setting, std::string value) {
  return {std::move(key), std::move(setting),
          [value](const std::string& v) { return if_true(v, value); }, ""};
}
// A key trainmem knows but does not price; `why` is printed in the ignored list.
inline ImportRule not_priced(std::string key, std::string why) {
  return {std::move(key), "", nullptr, std::move(why)};
}
inline bool has(const FlatConfig& c, const std::string& key) {
  return c.count(key) > 0;
}
inline bool has_prefix(const FlatConfig& c, const std::string& prefix) {
  const auto it = c.lower_bound(prefix);
  return it != c.end() && it->first.rfind(prefix, 0) == 0;
}

}  // namespace trainmem::io::rules

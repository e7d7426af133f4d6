#include "io/import/dist/text_formats.h"

#include <fmt/format.h>

#include <sstream>

namespace trainmem::import {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string unquote(std::string v) {
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    return v.substr(1, v.size() - 2);
  }
  return v;
}

std::string strip_comment(const std::string& line) {
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (line[i] == '#' && !quoted) return line.substr(0, i);
  }
  return line;
}

}  // namespace

Keys read_toml(const std::string& text) {
  Keys out;
  std::istringstream in(text);
  std::string line, section;
  while (std::getline(in, line)) {
    line = trim(strip_comment(line));
    if (line.empty()) continue;
    if (line.front() == '[' && line.back() == ']') {
      section = trim(line.substr(1, line.size() - 2));
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trim(line.substr(0, eq));
    out[section.empty() ? key : section + "." + key] = unquote(line.substr(eq + 1));
  }
  return out;
}

std::vector<std::string> read_command_words(const std::string& text) {
  std::istringstream in(text);
  std::string line, joined;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    if (!t.empty() && t.back() == '\\') {
      joined += t.substr(0, t.size() - 1) + " ";
    } else {
      joined += t + "\n";
    }
  }
  std::vector<std::string> words;
  std::istringstream w(joined);
  std::string word;
  while (w >> word) words.push_back(unquote(word));
  return words;
}

std::optional<std::string> flag_value(const std::vector<std::string>& words,
                                      const std::string& flag) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == flag && i + 1 < words.size()) return words[i + 1];
    if (words[i].rfind(flag + "=", 0) == 0) return words[i].substr(flag.size() + 1);
  }
  return std::nullopt;
}

bool has_flag(const std::vector<std::string>& words, const std::string& flag) {
  for (const std::string& w : words) {
    if (w == flag) return true;
  }
  return false;
}

Result<std::int64_t> as_int(const std::string& file, const std::string& key, const std::string& v) {
  try {
    std::size_t used = 0;
    const double d = std::stod(v, &used);
    if (used == v.size() && d >= 0 && d < 9e15 &&
        d == static_cast<double>(static_cast<std::int64_t>(d))) {
      return static_cast<std::int64_t>(d);
    }
  } catch (const std::exception&) {
  }
  return bad_input(file, key, fmt::format("'{}' is not a whole number", v));
}

Result<bool> as_bool(const std::string& file, const std::string& key, const std::string& v) {
  if (v == "true" || v == "True") return true;
  if (v == "false" || v == "False") return false;
  return bad_input(file, key, fmt::format("'{}' is not true or false", v));
}

}  // namespace trainmem::import

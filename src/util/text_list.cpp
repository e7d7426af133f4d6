#include "util/text_list.h"

#include <sstream>

namespace trainmem {

std::vector<std::string> split_list(std::string_view text) {
  std::string clean;
  for (char c : text) {
    if (c != '[' && c != ']' && c != '"' && c != '\'') clean += c;
  }
  std::vector<std::string> out;
  std::stringstream in(clean);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
  }
  return out;
}

}  // namespace trainmem

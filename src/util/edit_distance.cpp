#include "util/edit_distance.h"

#include <algorithm>
#include <vector>

#include "trainmem/errors.h"

namespace trainmem {

// The classic two-row dynamic programme: insertions, deletions and substitutions cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearest_name(std::string_view word, const std::vector<std::string>& names,
                         std::size_t below) {
  std::string best;
  for (const std::string& name : names) {
    const std::size_t d = edit_distance(word, name);
    if (d < below) {
      below = d;
      best = name;
    }
  }
  return best;
}

}  // namespace trainmem

// A list as users type it: "q_proj, v_proj", or a Python/JSON/YAML list pasted as printed
// ("['tok_embeddings', 'output']").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainmem {

// The items, trimmed, with brackets and quotes dropped; empty items are skipped.
std::vector<std::string> split_list(std::string_view text);

}  // namespace trainmem

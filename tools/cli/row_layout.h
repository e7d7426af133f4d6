// A measurement row's config.layout (validation/distributed.py) as layout flags, so `validate`
// prices a multi-rank row with the layout it ran under. Keys are the layout flags in snake_case.
#pragma once

#include <map>
#include <string>

#include "flags.h"
#include "trainmem/errors.h"

namespace trainmem::cli {

// `where` names the row in errors ("file.jsonl row-id"); an unknown key or a value that is not of
// the key's type is a bad_input error naming config.layout.KEY.
Result<LayoutFlags> layout_flags_of(const std::map<std::string, std::string>& layout,
                                    const std::string& where);

}  // namespace trainmem::cli

// Vocabulary internals (src/plan/vocabulary.cpp).
#pragma once

#include <string>

#include "trainmem/plan.h"

namespace trainmem {

// "full, lora, qlora, freeze": canonical names only.
std::string canonical_names(const Vocabulary& vocabulary);

}  // namespace trainmem

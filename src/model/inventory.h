// Helpers over tensor groups (src/model/inventory.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trainmem/model.h"

namespace trainmem {

// Elements in one tensor of the group.
std::int64_t tensor_elements(const TensorGroup& group);

std::string_view role_name(Role role);

}  // namespace trainmem

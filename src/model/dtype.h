// The table of element types (src/model/dtype.cpp).
#pragma once

#include <string>
#include <string_view>

#include "trainmem/model.h"

namespace trainmem {

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;              // our name, as printed and accepted: "bf16"
  std::string_view safetensors_name;  // the safetensors header spelling: "BF16"
  int bits;                           // bits per element as stored, before any block constants
};

const DtypeInfo& dtype_info(Dtype dtype);

}  // namespace trainmem

// Storage and compute element types, and the one table of their sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace trainmem {

enum class Dtype {
  f64,
  f32,
  bf16,
  f16,
  f8_e4m3,
  f8_e5m2,
  i64,
  i32,
  i16,
  i8,
  u8,
  boolean,
  nf4,
  fp4
};

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;              // our name, as printed and accepted: "bf16"
  std::string_view safetensors_name;  // the safetensors header spelling: "BF16"
  int bits;                           // bits per element as stored, before any block constants
};

const DtypeInfo& dtype_info(Dtype dtype);
std::string_view dtype_name(Dtype dtype);

// Parses our names ("bf16"), torch names ("bfloat16", "float32") and safetensors names ("BF16").
std::optional<Dtype> parse_dtype(std::string_view text);

// Bytes of `count` elements stored densely in `dtype` (rounded up to whole bytes). Block
// quantisation constants are not included: see quantisation.h.
std::int64_t dense_bytes(Dtype dtype, std::int64_t count);

}  // namespace trainmem

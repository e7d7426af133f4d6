// The one table of element sizes. Sources: torch dtype sizes; safetensors' Dtype enum
// (safetensors/src/tensor.rs); bitsandbytes 4-bit types store two weights per byte.
#include "model/dtype.h"

#include <array>
#include <string>

#include "trainmem/model.h"
#include "util/checked.h"

namespace trainmem {
namespace {

constexpr std::array<DtypeInfo, 14> kDtypes{{
    {Dtype::f64, "f64", "F64", 64},
    {Dtype::f32, "f32", "F32", 32},
    {Dtype::bf16, "bf16", "BF16", 16},
    {Dtype::f16, "f16", "F16", 16},
    {Dtype::f8_e4m3, "f8_e4m3", "F8_E4M3", 8},
    {Dtype::f8_e5m2, "f8_e5m2", "F8_E5M2", 8},
    {Dtype::i64, "i64", "I64", 64},
    {Dtype::i32, "i32", "I32", 32},
    {Dtype::i16, "i16", "I16", 16},
    {Dtype::i8, "i8", "I8", 8},
    {Dtype::u8, "u8", "U8", 8},
    {Dtype::boolean, "bool", "BOOL", 8},
    {Dtype::nf4, "nf4", "", 4},
    {Dtype::fp4, "fp4", "", 4},
}};

// Other spellings users and files use: torch names and config.json torch_dtype values.
struct Alias {
  std::string_view text;
  Dtype dtype;
};
constexpr std::array<Alias, 12> kAliases{{
    {"float64", Dtype::f64},
    {"double", Dtype::f64},
    {"float32", Dtype::f32},
    {"float", Dtype::f32},
    {"fp32", Dtype::f32},
    {"bfloat16", Dtype::bf16},
    {"float16", Dtype::f16},
    {"half", Dtype::f16},
    {"fp16", Dtype::f16},
    {"int8", Dtype::i8},
    {"uint8", Dtype::u8},
    {"float8_e4m3fn", Dtype::f8_e4m3},
}};

}  // namespace

const DtypeInfo& dtype_info(Dtype dtype) {
  return kDtypes[static_cast<std::size_t>(dtype)];
}

std::string_view dtype_name(Dtype dtype) {
  return dtype_info(dtype).name;
}

std::optional<Dtype> parse_dtype(std::string_view text) {
  for (const DtypeInfo& info : kDtypes) {
    if (text == info.name || (!info.safetensors_name.empty() && text == info.safetensors_name)) {
      return info.dtype;
    }
  }
  for (const Alias& alias : kAliases) {
    if (text == alias.text) return alias.dtype;
  }
  return std::nullopt;
}

std::int64_t dense_bytes(Dtype dtype, std::int64_t count) {
  const std::int64_t bits = dtype_info(dtype).bits;
  // count / 8 x bits plus the remainder's bytes: no intermediate count x bits to overflow.
  return sat_add(sat_mul(count / 8, bits), (count % 8 * bits + 7) / 8);
}

}  // namespace trainmem

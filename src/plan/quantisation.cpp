#include "plan/quantisation.h"

#include <fmt/format.h>

#include "trainmem/render.h"

namespace trainmem {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

std::int64_t elements(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

}  // namespace

std::int64_t quantised_bytes(const QuantPlan& quant, const std::vector<std::int64_t>& shape) {
  const std::int64_t n = elements(shape);
  switch (quant.kind) {
    case QuantKind::nf4:
    case QuantKind::fp4: {
      const std::int64_t blocks = ceil_div(n, quant.block_size);
      const std::int64_t constants =
          quant.double_quant ? blocks * 1 + ceil_div(blocks, kDoubleQuantBlock) * 4 : blocks * 4;
      return ceil_div(n, 2) + constants;
    }
    case QuantKind::int8: {
      const std::int64_t rows = shape.empty() ? 1 : shape.front();
      return n + rows * 4;
    }
  }
  return 0;
}

double quantised_bits_per_weight(const QuantPlan& quant) {
  const auto block = static_cast<double>(quant.block_size);
  switch (quant.kind) {
    case QuantKind::nf4:
    case QuantKind::fp4:
      return quant.double_quant ? 4.0 + 8.0 / block + 32.0 / (block * kDoubleQuantBlock)
                                : 4.0 + 32.0 / block;
    case QuantKind::int8:
      return 8.0;
  }
  return 0;
}

std::string quantised_formula(const QuantPlan& quant, std::int64_t params) {
  switch (quant.kind) {
    case QuantKind::nf4:
    case QuantKind::fp4:
      return quant.double_quant
                 ? fmt::format(
                       "{} params x (4 bits + 8-bit absmax per {} + fp32 per {} blocks)"
                       " = {:.3f} bits",
                       with_commas(params), quant.block_size, kDoubleQuantBlock,
                       quantised_bits_per_weight(quant))
                 : fmt::format("{} params x (4 bits + fp32 absmax per {}) = {:.3f} bits",
                               with_commas(params), quant.block_size,
                               quantised_bits_per_weight(quant));
    case QuantKind::int8:
      return fmt::format("{} params x 1 B + fp32 scale per output row", with_commas(params));
  }
  return "";
}

}  // namespace trainmem

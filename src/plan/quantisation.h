// Storage cost of a block-quantised frozen weight (QLoRA's base), per tensor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainmem/plan.h"

namespace trainmem {

// Second-level block: with double quantisation, 256 first-level absmax values share one fp32
// constant (bitsandbytes functional.py quantize_4bit, compress_statistics=True, blocksize=256).
inline constexpr std::int64_t kDoubleQuantBlock = 256;

// Bytes of one tensor of `shape` stored as `quant`:
//  nf4/fp4: ceil(n/2) packed weights + per block of `block_size` weights one absmax, fp32
//           (4 B), or with double quantisation 1 B plus 4 B per 256 blocks.
//  int8:    n bytes + one fp32 scale per output row (bitsandbytes Int8Params SCB).
std::int64_t quantised_bytes(const QuantPlan& quant, const std::vector<std::int64_t>& shape);

// Bits per weight including block constants, for display: 4.127 for nf4 with double quant.
double quantised_bits_per_weight(const QuantPlan& quant);

// "N params x 4 bits + absmax ..." for ledger formulas.
std::string quantised_formula(const QuantPlan& quant, std::int64_t params);

}  // namespace trainmem

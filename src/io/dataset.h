// Reading dataset files (src/io/dataset.cpp).
#pragma once

#include <cstdint>

#include "trainmem/import.h"

namespace trainmem {

// Dataset files are read whole, up to 1 GiB; a larger one can be sampled (`shuf -n 100000`).
inline constexpr std::int64_t kMaxDatasetBytes = std::int64_t{1} << 30;

// The published bytes per token for a vocabulary size band.
BytesPerToken bytes_per_token_for_vocab(std::int64_t vocab_size);

// ceil(bytes / bytes per token), and at least 1: every record trains on a token.
std::int64_t estimated_tokens(std::int64_t bytes, const BytesPerToken& rate);

// The nearest-rank percentile of ascending `sorted` (not empty): the value at rank
// ceil(percent / 100 x n), 1-based. p50 of {1,2,3,4} is 2; p95 of 20 values is the 19th.
std::int64_t percentile_nearest_rank(const std::vector<std::int64_t>& sorted, int percent);

}  // namespace trainmem

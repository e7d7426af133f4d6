// The seed-001 table internals (src/verdict/table.cpp).
#pragma once

#include "trainmem/solve.h"

namespace trainmem {

// The plan of one column: batch 1 x 1024 tokens, full checkpointing, AdamW, bf16 mixed precision;
// LoRA/QLoRA at rank 16 on q, k, v, o, gate, up, down (seed 001).
TrainingPlan table_plan(Method method, Convention convention);

// GB with up to two decimals and no trailing zeros, as the seed prints: 9.6, 64, 17.1, 61.52.
std::string seed_gb(std::int64_t bytes);

}  // namespace trainmem

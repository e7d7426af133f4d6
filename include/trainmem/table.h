// The seed-001 per-tier table: for each model, the fixed part (static state: weights, gradients,
// optimizer states, master weights) of a full fine-tune, LoRA and QLoRA, and the smallest memory
// tier that holds LoRA and QLoRA at batch 1 x 1024 tokens with checkpointing plus the tier's
// 2 GB reserve. Computed with estimate(); nothing is re-derived here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// The models seed 001 tabulates, as preset ids, in its order.
std::vector<std::string_view> seed_table_presets();

// The plan of one column: batch 1 x 1024 tokens, full checkpointing, AdamW, bf16 mixed precision;
// LoRA/QLoRA at rank 16 on q, k, v, o, gate, up, down (seed 001).
TrainingPlan table_plan(Method method, Convention convention);

struct TableRow {
  std::string model;                  // "Qwen3-8B"
  std::int64_t full_bytes = 0;        // static state of a full fine-tune
  std::int64_t lora_bytes = 0;        // static state of LoRA
  std::int64_t qlora_bytes = 0;       // static state of QLoRA
  std::int64_t lora_peak_bytes = 0;   // what the tier must hold for LoRA (peak of the step)
  std::int64_t qlora_peak_bytes = 0;  // the same for QLoRA
  std::string lora_tier;              // "12-16 GB", as the seed writes it; "over 128 GB" if none
  std::string qlora_tier;
};

// The seed's tiers (DeviceKind::tier in the device database), smallest first.
std::vector<Device> seed_tiers();

// The smallest tier whose usable memory (upper bound - reserve) holds `peak_bytes`.
std::string smallest_tier(std::int64_t peak_bytes, const std::vector<Device>& tiers);

TableRow table_row(const LoadedModel& model, Convention convention,
                   const std::vector<Device>& tiers);

// GB with up to two decimals and no trailing zeros, as the seed prints: 9.6, 64, 17.1, 61.52.
std::string seed_gb(std::int64_t bytes);

// Text: the chosen convention's table with the other convention's value beside each figure.
std::string render_table_text(const std::vector<TableRow>& primary,
                              const std::vector<TableRow>& other, Convention convention);
// JSON: {"schema": "trainmem.table/1", "convention", "rows": [...]}.
std::string render_table_json(const std::vector<TableRow>& rows, Convention convention);

}  // namespace trainmem

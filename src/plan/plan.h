// Plan internals: the textbook convention applied, and the enum parsers behind plan settings
// (src/plan/plan.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "trainmem/plan.h"

namespace trainmem {

// The plan as its convention reads it: under textbook, bf16-mixed and fp16-mixed keep the seeds'
// meaning (16-bit weights with an fp32 master copy: bf16_mixed / fp16_mixed). estimate() prices
// this reading, so every caller gets it.
TrainingPlan under_convention(TrainingPlan plan);

std::optional<Method> parse_method(std::string_view s);

std::optional<Precision> parse_precision(std::string_view s);

std::optional<OptimizerKind> parse_optimizer(std::string_view s);

std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view s);

std::optional<Checkpointing> parse_checkpointing(std::string_view s);

std::optional<Attention> parse_attention(std::string_view s);

std::optional<Loss> parse_loss(std::string_view s);

std::optional<QuantKind> parse_quant(std::string_view s);

std::optional<EvalStrategy> parse_eval_strategy(std::string_view s);

}  // namespace trainmem

// What trainmem can price, and the up-front check that a plan is inside it. Derived from one rule:
// every byte count is an exact int64 (at most 2^63 - 1 bytes, 8 EiB). The core multiplies a
// plan's largest element figure by small constants (bytes per element, saved copies per layer,
// at most 2^11 together), so the largest figure may be 2^52 elements; check_plan_size() computes
// those figures with checked arithmetic and refuses a plan past it before anything is priced.
// docs/reliability.md.
#pragma once

#include <cstdint>
#include <optional>

#include "trainmem/model.h"
#include "trainmem/errors.h"
#include "trainmem/plan.h"

namespace trainmem {

// The largest element figure a plan may have (parameters, tokens x width x layers, ...).
inline constexpr std::int64_t kMaxFigureElements = std::int64_t{1} << 52;

// Structure caps where a model could not exist: published decoders have at most a few hundred
// layers (Llama 3.1 405B: 126) and a few hundred routed experts (Kimi K2: 384). The caps bound
// the work done per layer and per expert, not the sizes (those follow kMaxFigureElements).
inline constexpr std::int64_t kMaxLayers = 1024;
inline constexpr std::int64_t kMaxExperts = 65536;

// nullopt when every figure of (model, plan) fits the rule above; else an error naming the
// figure, its size, and the limit.
std::optional<Error> check_plan_size(const LoadedModel& model, const TrainingPlan& plan);

// nullopt when the plan's choices exist in the model: --train-layers names layers it has.
std::optional<Error> check_plan_matches_model(const LoadedModel& model, const TrainingPlan& plan);

// True when the plan's figures are inside the rule (solve and sweep skip candidates that are not).
bool plan_size_ok(const LoadedModel& model, const TrainingPlan& plan);

}  // namespace trainmem

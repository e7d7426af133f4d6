// Phase masks of the step's moments, and the per-layer activation facts shared by the
// activations, logits and temporaries tenants (all owned by the activation model).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ledger/activation_model.h"
#include "ledger/context.h"
#include "ledger/format.h"

namespace trainmem::ledger {

// forward .. backward_start of both steps: what forward saves and backward has not freed yet.
inline PhaseMask forward_to_backward_start() {
  return between(0, Phase::forward, Phase::backward_start) |
         between(1, Phase::forward, Phase::backward_start);
}
// forward .. end_of_backward of both steps: the batch itself.
inline PhaseMask forward_to_end_of_backward() {
  return between(0, Phase::forward, Phase::end_of_backward) |
         between(1, Phase::forward, Phase::end_of_backward);
}
inline PhaseMask in_phase(Phase p) {
  return phase_bit(0, p) | phase_bit(1, p);
}
inline PhaseMask late_backward() {
  return in_phase(Phase::backward);
}

LayerActivations layer_activations(const Context& ctx);

// A loop that keeps a line's tensors into the next forward (outputs_kept: the logits, and the
// 4-bit inputs the graph holds) is priced as the line plus a previous-step copy live in the
// steady forward. The id of the line a copy stands for, or "" when `id` is not such a copy
// (logits.cpp, activations.cpp); the event stream uses it to free the older tensors.
inline constexpr std::string_view kLogitsOutputId = "logits.output";
inline constexpr std::string_view kPreviousLogitsOutputId = "logits.previous_output";
inline constexpr std::string_view kHeldByGraphId = "activations.held_by_graph";
inline constexpr std::string_view kPreviousHeldByGraphId = "activations.previous_held_by_graph";
inline constexpr std::string_view kKvCacheId = "activations.kv_cache";
inline constexpr std::string_view kPreviousKvCacheId = "activations.previous_kv_cache";
inline std::string_view previous_step_copy_of(std::string_view id) {
  if (id == kPreviousLogitsOutputId) return kLogitsOutputId;
  if (id == kPreviousHeldByGraphId) return kHeldByGraphId;
  if (id == kPreviousKvCacheId) return kKvCacheId;
  return "";
}
// The lines of tensors held past their nodes' backward, split per layer in the event stream.
inline bool is_held_line(std::string_view id) {
  return id == kHeldByGraphId || id == kKvCacheId;
}

}  // namespace trainmem::ledger

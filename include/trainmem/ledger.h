// The ledger: every byte the plan costs, as lines a reader can check. Totals are only ever sums of
// lines; the peak is the maximum over the phases of a step of the lines live in that phase.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/plan.h"

namespace trainmem {

enum class Tenant {
  weights,
  gradients,
  optimizer_states,
  master_weights,
  activations,
  logits,
  temporaries,
  overhead,
};
inline constexpr int kTenantCount = 8;
std::string_view tenant_name(Tenant t);   // snake_case, as in JSON
std::string_view tenant_title(Tenant t);  // "Optimizer states", as in the report

// Phases of one optimizer step, in order. backward_start is the first moment of backward (the
// loss's gradients exist, no parameter gradient does yet); backward is late in backward (every
// gradient allocated, the first layer's activations still held).
enum class Phase {
  loaded,
  forward,
  end_of_forward,
  backward_start,
  backward,
  end_of_backward,
  optimizer_step
};
inline constexpr int kPhaseCount = 7;
// Each phase is seen twice: in the first step (state created lazily) and in the steady state.
inline constexpr int kPhaseSlots = 2 * kPhaseCount;
std::string_view phase_name(Phase p);  // "end_of_forward"

// A bit set over phase slots: bit (step_index * kPhaseCount + phase), step_index 0 = first step.
using PhaseMask = std::uint32_t;
constexpr PhaseMask phase_bit(int step_index, Phase p) {
  return PhaseMask{1} << (step_index * kPhaseCount + static_cast<int>(p));
}
inline constexpr PhaseMask kAllPhases = (PhaseMask{1} << kPhaseSlots) - 1;
// Slot -> "step 1 backward" / "steady backward".
std::string slot_name(int slot);

struct LedgerItem {
  // A stable key for scripts and tests: "<tenant>.<what>" ("logits.fp32_upcast",
  // "weights.frozen.bf16"); the label is for people and may change wording.
  std::string id;
  Tenant tenant = Tenant::weights;
  std::string label;  // "Weights, bf16 (trainable)"
  std::int64_t bytes = 0;
  std::string formula;          // the arithmetic with its numbers: "1,543,714,304 params x 2 B"
  std::string source;           // where the rule comes from: a paper, or a framework source file
  PhaseMask live = kAllPhases;  // phases in which these bytes are allocated
  bool estimated = false;       // true when modelled rather than counted
};

// What the report says about the model.
struct ModelSummary {
  std::string name;
  std::string source;         // "preset", "config.json", "safetensors headers", "hf cache"
  std::string source_detail;  // the path or preset id used
  std::string model_type;
  std::int64_t params_total = 0;
  std::int64_t params_trainable = 0;
  std::int64_t params_with_adapters = 0;  // base plus adapter tensors, as PEFT's "all params"
  std::int64_t params_active = 0;
  std::int64_t params_mtp = 0;        // reported separately, not priced
  std::int64_t params_published = 0;  // from the model card, 0 when unknown
  std::int64_t params_priced = 0;     // the count the textbook rates were applied to
};

struct Ledger {
  ModelSummary model;
  TrainingPlan plan;
  std::vector<LedgerItem> items;
  std::vector<std::string> notes;  // assumptions and reminders shown under the report
};

struct Totals {
  std::int64_t static_bytes = 0;      // weights + gradients + optimizer states + master weights
  std::int64_t activation_bytes = 0;  // activations + logits at their peak phase
  std::int64_t peak_bytes = 0;        // max over phase slots of live bytes
  int peak_slot = 0;                  // the slot where the peak falls
  std::array<std::int64_t, kTenantCount> by_tenant{};  // sum of items per tenant
  std::array<std::int64_t, kPhaseSlots> by_slot{};     // live bytes per phase slot
  // A figure did not fit 64 bits (saturated at 2^63 - 1): the plan needs more than 8 EiB and
  // never fits. check_plan_size() (limits.h) refuses such plans up front; this is the second
  // guard.
  bool overflow = false;
};

Totals totals(const Ledger& ledger);

// The phase of the run beyond the training step whose lines are live in `slot`, in words ("the
// validation pass between steps", "loading: quantising the base weights"), or "" when only the
// step's lines are (src/ledger/run_phases.cpp).
std::string_view run_phase_at(const Ledger& ledger, int slot);
// A line of the QLoRA load transient (allocated after the weights in the event stream).
bool is_load_transient(const LedgerItem& item);

// Each tenant's live bytes in one phase slot (the peak's, for the stacked bar).
std::array<std::int64_t, kTenantCount> live_at_slot(const Ledger& ledger, int slot);

}  // namespace trainmem

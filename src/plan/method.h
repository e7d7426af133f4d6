// Fine-tuning methods: apply_method(), and which tensors a LoRA target list
// reaches, which groups are adapter tensors, and the notes a report prints about what was adapted,
// quantised or frozen.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// The inventory as the plan leaves it: trainable flags, quantised flags and storage dtypes set by
// the method, and LoRA adapter tensors appended. Used by estimate() and by reports.
ParameterInventory apply_method(const LoadedModel& model, const TrainingPlan& plan);

// Target names accepted by --lora-targets and --train-modules (besides "norm" for the latter):
// q k v o gate up down lm_head embed router experts shared_experts q_a q_b kv_a kv_b, and the
// groups all-linear, attention, mlp. On a mixture-of-experts model gate/up/down reach the dense
// MLPs and the shared experts, not the routed experts: transformers v5 fuses routed experts into
// 3-D parameters that PEFT's target_modules name matching does not reach. `experts` adapts every
// routed expert's gate/up/down (what name matching did on transformers v4, where each expert is an
// nn.Linear). `shared_experts` and `router` name those modules alone.
std::vector<std::string_view> lora_target_names();

// True when `name` is an accepted target (or group) name.
bool is_lora_target_name(std::string_view name);

// Suffixes of the tensors apply_method appends (".lora_A.weight", ".lora_B.weight",
// ".lora_magnitude_vector", ".lora_embedding_A", ...): true for an adapter group.
bool is_adapter(const TensorGroup& group);

// True for the token embedding's own tensor training (full, freeze): on a tied model that is the
// head's weight too. Not for an adapter, nor for a trained copy beside it (modules_to_save), which
// the head does not use.
bool trains_embedding_tensor(const TensorGroup& group);

// True when a base group is reached by `targets` (LoRA) or `train_modules` (freeze). Biases and
// vectors are reached only by "norm" (freeze) and never by LoRA. Routed experts are reached by
// "experts", and by the MLP's names too when `experts_by_name` (transformers < 5's nn.Linear
// experts: FrameworkBehaviour::experts_as_linears).
bool targets_group(const std::vector<std::string>& targets, const TensorGroup& group,
                   bool experts_by_name = false);

// PEFT's LoRA parameters for one linear [out, in] at rank r: r x (in + out). DoRA adds out.
std::int64_t lora_params(std::int64_t out, std::int64_t in, std::int64_t rank, bool dora);

// What the method did, for the report's notes: adapted modules and counts, the MoE choice, the
// quantised/16-bit split, the frozen/trainable split, and what a paged optimizer changes.
std::vector<std::string> method_notes(const LoadedModel& model, const TrainingPlan& plan,
                                      const ParameterInventory& applied);

}  // namespace trainmem

// ParameterInventory: the exact list of parameter tensor groups of a model. A group is one tensor
// shape repeated `multiplicity` times (e.g. q_proj in every layer, or one expert's up projection in
// every expert of every MoE layer). Generated from a ModelSpec, or read from safetensors headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/dtype.h"
#include "trainmem/model_spec.h"

namespace trainmem {

enum class Role {
  embedding,
  position_embedding,
  q,
  k,
  v,
  o,
  qkv,  // attention projections (qkv: fused, Phi-3)
  q_a,
  q_b,
  kv_a,
  kv_b,  // MLA low-rank projections
  q_norm,
  k_norm,
  latent_norm,  // per-head q/k norms; MLA's q_a/kv_a layernorms
  gate,
  up,
  gate_up,
  down,  // MLP projections (gate_up: fused, Phi-3); plain MLP uses up/down
  router,
  router_bias,         // MoE gate and DeepSeek's score-correction bias
  shared_expert_gate,  // Qwen2-MoE's sigmoid gate on the shared expert
  layer_norm,
  final_norm,  // norms inside a layer, and the one after the last layer
  lm_head,
};

// Which MLP a tensor belongs to: the dense MLP, a routed expert, or a shared expert.
enum class ExpertKind { none, routed, shared };

// A LoRA/DoRA tensor appended by apply_method, and which one: an adapter is a property of the
// tensor, not of its name.
enum class AdapterPart { none, lora_a, lora_b, magnitude };

struct TensorGroup {
  std::string name;  // e.g. "model.layers.*.self_attn.q_proj.weight"
  Role role = Role::embedding;
  ExpertKind expert = ExpertKind::none;
  bool is_bias = false;             // a bias vector rather than a weight
  std::vector<std::int64_t> shape;  // one tensor's shape; linear weights are [out, in]
  std::int64_t multiplicity = 1;    // how many tensors of this shape (layers x experts)
  std::int64_t layer_first = -1;    // first layer index covered, -1 when not in a layer
  std::int64_t layer_last = -1;     // last layer index covered (inclusive)
  bool mtp = false;                 // part of DeepSeek's next-token-prediction module
  Dtype dtype = Dtype::bf16;        // storage dtype
  bool trainable = true;            // receives gradients under the plan (set by apply_method)
  bool quantised = false;           // stored block-quantised (QLoRA base), set by apply_method
  AdapterPart adapter = AdapterPart::none;  // set by apply_method on the tensors it appends
};

struct ParameterInventory {
  std::vector<TensorGroup> groups;
};

// Elements in one tensor of the group.
std::int64_t tensor_elements(const TensorGroup& group);
// Elements in all tensors of the group.
std::int64_t group_params(const TensorGroup& group);
// True for the weight of a linear layer (a LoRA candidate): 2-D and a projection role.
bool is_linear_weight(const TensorGroup& group);
std::string_view role_name(Role role);

// The exact tensor list that Hugging Face transformers instantiates for `spec`.
// MTP layers (DeepSeek-V3) are included with mtp = true.
ParameterInventory inventory(const ModelSpec& spec);

// Counts. `params_total` excludes MTP tensors (transformers does not load them).
std::int64_t params_total(const ParameterInventory& inv);
std::int64_t params_trainable(const ParameterInventory& inv);
std::int64_t params_mtp(const ParameterInventory& inv);
// Parameters touched per token: routed experts scaled by top_k / experts.
std::int64_t params_active(const ParameterInventory& inv, const ModelSpec& spec);
// Parameters outside the token and position embeddings (how model cards state "non-embedding").
std::int64_t params_non_embedding(const ParameterInventory& inv);

}  // namespace trainmem

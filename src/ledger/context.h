// What every ledger tenant reads: the model as the plan leaves it, the plan, and the derived facts
// several tenants share. Each tenant file appends its lines; none reads another's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ledger/activation_model.h"
#include "plan/method.h"
#include "trainmem/estimate.h"

namespace trainmem::ledger {

// Each layer's saved activations (ledger/activation_model.h), built once per estimate by
// layer_activations() (phases.h) and read by the activation, logits and temporaries tenants and
// by the GPU event stream.
struct LayerActivations {
  ActivationSettings settings;
  std::vector<LayerPlan> plans;
  // Each layer's saved tensors: the list `layer_list[layer]` of `term_lists`. Alike layers
  // (same_layer_terms) share one list: copying it per layer was 1,300 string copies a process.
  std::vector<std::vector<ActivationTerm>> term_lists;
  std::vector<std::size_t> layer_list;  // per layer
  // Per list of term_lists: the linears whose matmul input needs no grad
  // (layer_terms), whose weight backward does not keep.
  std::vector<RoleSet> no_grad_inputs;
  std::vector<bool> needs_input;  // a checkpoint keeps this layer's input
  std::vector<ActivationTerm> final_terms;
  std::int64_t max_layer_bytes = 0;  // the largest layer's terms, all of them (a recompute)
  // The largest layer's terms its nodes free in backward (not held by the graph).
  std::int64_t max_layer_freed_bytes = 0;
  bool held_by_graph = false;  // some layer or final term is held by the graph
  bool lm_head_trainable = false;
  bool any_requires_grad = false;  // the loss has something to differentiate

  std::size_t layer_count() const { return layer_list.size(); }
  const std::vector<ActivationTerm>& terms(std::size_t layer) const {
    return term_lists[layer_list[layer]];
  }
  // Whether `role`'s matmul in `layer` reads an input that requires grad.
  bool grad_input(std::size_t layer, Role role) const {
    return (no_grad_inputs[layer_list[layer]] & role_bit(role)) == 0;
  }
};

struct Context {
  const LoadedModel& model;
  const TrainingPlan& plan;
  // The layers as the plan's framework builds them (plan/framework_layers.h): every tenant reads
  // shapes and layer code from here, not from model.spec.
  ModelSpec spec;
  ParameterInventory inventory;   // after apply_method (adapters appended, flags set)
  std::int64_t params_total = 0;  // base model, MTP excluded
  std::int64_t params_trainable = 0;
  // Textbook convention: the published (or --params) count the uniform rates apply to.
  std::int64_t params_priced = 0;
  LayerActivations layers;  // filled by make_context
};

// The context every tenant reads (src/ledger/estimate.cpp): the method applied, the counts, and
// the per-layer activations computed once. `plan` is the effective plan.
Context make_context(const LoadedModel& model, const TrainingPlan& plan);

// How many pieces the lm_head and the loss run in: torchtune's fixed count, or litgpt's chunks of
// `loss_chunk_positions` positions per sequence (FrameworkBehaviour, src/plan/framework.cpp);
// 1 where the head runs on the whole batch. Defined with the logits tenant (logits.cpp).
std::int64_t loss_pieces(const FrameworkBehaviour& b, std::int64_t seq);

// The fp32 weights torch.autocast keeps a bf16 copy of from forward to their layer's backward
// (temporaries.cpp): the ledger's line and the GPU event stream's per-tensor split share them.
struct AutocastCopies {
  // Each tensor of these is cast once and kept: the inventory's groups, a layer group cut to the
  // layers whose matmul input requires grad (LayerActivations::grad_input).
  std::vector<TensorGroup> groups;
  std::int64_t params = 0;  // the groups' parameters
  // A frozen lm_head (or the tied embedding) that runs in P pieces is cast P - 1 more times: its
  // parameters, and the further pieces.
  std::int64_t frozen_head_params = 0;
  std::int64_t further_head_pieces = 0;
};
AutocastCopies autocast_copies(const Context& ctx);
inline constexpr std::string_view kAutocastCopiesId = "temporaries.autocast_weight_copies";

// A tied embedding's accumulation at the end of backward (temporaries.cpp): the embedding's dense
// gradient and its out-of-place sum with lm_head's, each V x h in the gradients' dtype
// (torch/csrc/autograd/input_buffer.cpp accumulate); the event stream replays the two tensors.
inline constexpr std::string_view kTiedEmbeddingGradId = "temporaries.tied_embedding_grad";
inline constexpr int kTiedAccumulationTensors = 2;

using Items = std::vector<LedgerItem>;

// One function per tenant, each in its own file under src/ledger/.
void add_weights(const Context& ctx, Items& items);
void add_gradients(const Context& ctx, Items& items);
void add_optimizer_states(const Context& ctx, Items& items);  // includes master weights
void add_activations(const Context& ctx, Items& items);       // saved for backward
void add_logits(const Context& ctx, Items& items);            // logits, loss upcast, their grads
void add_temporaries(const Context& ctx, Items& items);       // step scratch, recompute, dequant
void add_overhead(const Context& ctx, Items& items);          // CUDA context, allocator slack

}  // namespace trainmem::ledger

// Gradients tenant: one gradient per trainable parameter, in the recipe's gradient dtype (PyTorch
// allocates .grad like the parameter: torch/csrc/autograd/accumulate_grad.h). They appear during
// backward and are freed by zero_grad(set_to_none=True) after the optimizer step, so they are live
// from backward to the step, and across micro-batches when accumulating.
#include <fmt/format.h>

#include <map>

#include "ledger/context.h"
#include "ledger/format.h"
#include "ledger/phases.h"
#include "model/dtype.h"
#include "model/inventory.h"
#include "plan/method.h"
#include "plan/precision.h"

namespace trainmem::ledger {
namespace {

PhaseMask gradient_phases(const TrainingPlan& plan) {
  if (plan.convention == Convention::textbook) return kAllPhases;
  // Accumulating, they live from the first backward on, across micro-batches, except at the
  // optimizer-step boundary (the steady state's "loaded" slot): zero_grad has freed them there,
  // and that is where a framework evaluates between steps (litgpt's validate() after
  // optimizer.step(); zero_grad()). Between micro-batches nothing but them and the weights is live,
  // which the forward slot already holds with more.
  if (plan.grad_accum > 1) return from_phase(0, Phase::backward) & ~phase_bit(1, Phase::loaded);
  return between(0, Phase::backward, Phase::optimizer_step) |
         between(1, Phase::backward, Phase::optimizer_step);
}

// The input embedding's gradients are made by its backward, the last node the engine runs, after
// the first decoder layer's (torch/csrc/autograd/engine.cpp walks the graph from the loss;
// AccumulateGrad allocates .grad when the node runs): no layer's backward sees them. Measured:
// Qwen3-8B's checkpointed full fine-tune at 4,096 tokens peaks recomputing layer 0 without its
// V x h gradient (validation/data/measurements.jsonl). A tied embedding's gradient is lm_head's
// first (held from the start of backward, temporaries' tied accumulation), and under accumulation
// an earlier micro-batch's is live through every later backward.
bool gradient_after_the_layers(const Context& ctx, const TensorGroup& g) {
  if (g.role != Role::embedding && g.role != Role::position_embedding) return false;
  if (ctx.plan.grad_accum > 1) return false;
  const bool tied_weight = g.role == Role::embedding && ctx.spec.tied_embeddings &&
                           !ctx.plan.behaviour.unties_embeddings && !g.module_copy &&
                           !is_adapter(g);
  return !tied_weight;
}

}  // namespace

void add_gradients(const Context& ctx, Items& items) {
  const Dtype dtype = recipe(ctx.plan.precision).gradients;
  const PhaseMask live = gradient_phases(ctx.plan);
  if (ctx.plan.convention == Convention::textbook || ctx.plan.params_override > 0) {
    // Textbook: the full model's gradients, or the adapter's when the base is frozen.
    const std::int64_t n =
        ctx.plan.method == Method::full ? ctx.params_priced : ctx.params_trainable;
    items.push_back({.id = "gradients.textbook",
                     .tenant = Tenant::gradients,
                     .label = fmt::format("Gradients, {}", dtype_name(dtype)),
                     .bytes = dense_bytes(dtype, n),
                     .formula = per_param(n, dtype),
                     .source = "seed 001: one gradient per trainable parameter",
                     .live = live,
                     .estimated = false});
    return;
  }
  // Adapters may be kept in another dtype than the base (PEFT autocast_adapter_dtype): the
  // gradient follows the parameter's own dtype when it is wider than the recipe's.
  if (ctx.plan.behaviour.optimizer_in_backward) {
    // torchtune optimizer_in_bwd: a post-accumulate-grad hook steps the parameter and frees its
    // gradient, so at most the largest parameter's gradient is live, only during backward.
    std::int64_t largest = 0;
    Dtype d_largest = dtype;
    for (const TensorGroup& g : ctx.inventory.groups) {
      if (!g.trainable || g.mtp) continue;
      const Dtype d = dtype_info(g.dtype).bits > dtype_info(dtype).bits ? g.dtype : dtype;
      if (dense_bytes(d, tensor_elements(g)) > dense_bytes(d_largest, largest)) {
        largest = tensor_elements(g);
        d_largest = d;
      }
    }
    items.push_back(
        {.id = "gradients.in_backward",
         .tenant = Tenant::gradients,
         .label = fmt::format("Gradient of one parameter, {} (optimizer steps in backward)",
                              dtype_name(d_largest)),
         .bytes = dense_bytes(d_largest, largest),
         .formula = per_param(largest, d_largest),
         .source = "torchtune training/_memory.py register_optim_in_bwd_hooks "
                   "(register_post_accumulate_grad_hook)",
         .live = in_phase(Phase::backward) | in_phase(Phase::end_of_backward),
         .estimated = false});
    return;
  }
  std::map<Dtype, std::int64_t> by_dtype, after_layers;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (!g.trainable || g.mtp) continue;
    const Dtype d = dtype_info(g.dtype).bits > dtype_info(dtype).bits ? g.dtype : dtype;
    (gradient_after_the_layers(ctx, g) ? after_layers : by_dtype)[d] += group_params(g);
  }
  for (const auto& [d, n] : by_dtype) {
    items.push_back(
        {.id = "gradients.all",
         .tenant = Tenant::gradients,
         .label = fmt::format("Gradients, {}", dtype_name(d)),
         .bytes = dense_bytes(d, n),
         .formula = per_param(n, d),
         .source = "torch/csrc/autograd/functions/accumulate_grad.h: .grad like the parameter",
         .live = live,
         .estimated = false});
  }
  for (const auto& [d, n] : after_layers) {
    items.push_back(
        {.id = "gradients.embedding",
         .tenant = Tenant::gradients,
         .label = fmt::format("Gradients of the input embeddings, {} (made after the layers' "
                              "backward)",
                              dtype_name(d)),
         .bytes = dense_bytes(d, n),
         .formula = per_param(n, d),
         .source = "torch/csrc/autograd/engine.cpp: the embedding's backward runs last; "
                   "accumulate_grad.h",
         .live = live & ~in_phase(Phase::backward),
         .estimated = false});
  }
}

}  // namespace trainmem::ledger

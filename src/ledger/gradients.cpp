// Gradients tenant: one gradient per trainable parameter, in the recipe's gradient dtype (PyTorch
// allocates .grad like the parameter: torch/csrc/autograd/accumulate_grad.h). They appear during
// backward and are freed by zero_grad(set_to_none=True) after the optimizer step, so they are live
// from backward to the step, and across micro-batches when accumulating.
#include <fmt/format.h>

#include <map>

#include "ledger/context.h"
#include "ledger/format.h"
#include "plan/precision.h"

namespace trainmem::ledger {
namespace {

PhaseMask gradient_phases(const TrainingPlan& plan) {
  if (plan.convention == Convention::textbook) return kAllPhases;
  if (plan.grad_accum > 1) return from_phase(0, Phase::backward);
  return between(0, Phase::backward, Phase::optimizer_step) |
         between(1, Phase::backward, Phase::optimizer_step);
}

}  // namespace

void add_gradients(const Context& ctx, Items& items) {
  const Dtype dtype = recipe(ctx.plan.precision).gradients;
  const PhaseMask live = gradient_phases(ctx.plan);
  if (ctx.plan.convention == Convention::textbook || ctx.plan.params_override > 0) {
    // Textbook: the full model's gradients, or the adapter's when the base is frozen.
    const std::int64_t n =
        ctx.plan.method == Method::full ? ctx.params_priced : ctx.params_trainable;
    items.push_back({Tenant::gradients, fmt::format("Gradients, {}", dtype_name(dtype)),
                     dense_bytes(dtype, n), per_param(n, dtype),
                     "seed 001: one gradient per trainable parameter", live, false});
    return;
  }
  // Adapters may be kept in another dtype than the base (PEFT autocast_adapter_dtype): the
  // gradient follows the parameter's own dtype when it is wider than the recipe's.
  std::map<Dtype, std::int64_t> by_dtype;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (!g.trainable || g.mtp) continue;
    const Dtype d = dtype_info(g.dtype).bits > dtype_info(dtype).bits ? g.dtype : dtype;
    by_dtype[d] += group_params(g);
  }
  for (const auto& [d, n] : by_dtype) {
    items.push_back({Tenant::gradients, fmt::format("Gradients, {}", dtype_name(d)),
                     dense_bytes(d, n), per_param(n, d),
                     "torch/csrc/autograd/functions/accumulate_grad.h: .grad like the parameter",
                     live, false});
  }
}

}  // namespace trainmem::ledger

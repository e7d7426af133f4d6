// Optimizer states and master weights. Both exist only for trainable parameters. States are
// created lazily at the first optimizer step (torch/optim/optimizer.py _init_group), so in the
// first step they are live only from the step on; the master copy is made at initialisation.
#include <fmt/format.h>

#include <algorithm>

#include "ledger/context.h"
#include "ledger/format.h"
#include "model/dtype.h"
#include "plan/optimizer.h"
#include "plan/precision.h"
#include "trainmem/render.h"

namespace trainmem::ledger {
namespace {

PhaseMask state_phases(const TrainingPlan& plan) {
  if (plan.convention == Convention::textbook) return kAllPhases;
  // Stepping in backward (torchtune optimizer_in_bwd) creates the state in the first backward.
  if (plan.behaviour.optimizer_in_backward) return from_phase(0, Phase::backward);
  return phase_bit(0, Phase::optimizer_step) | steady_only();
}

// Textbook: uniform bytes per trainable parameter (seed 001: master 4, Adam 8, 8-bit Adam 2).
void add_textbook(const Context& ctx, Items& items) {
  const PrecisionRecipe& r = recipe(ctx.plan.precision);
  const OptimizerRow& row = optimizer_row(ctx.plan.optimizer);
  const std::int64_t n = ctx.plan.method == Method::full ? ctx.params_priced : ctx.params_trainable;
  if (r.master) {
    items.push_back({.id = "master_weights.textbook",
                     .tenant = Tenant::master_weights,
                     .label = "Master weights, f32",
                     .bytes = dense_bytes(*r.master, n),
                     .formula = per_param(n, *r.master),
                     .source = "NVIDIA mixed-precision guide: a primary copy of weights in FP32",
                     .live = kAllPhases,
                     .estimated = false});
  }
  const std::int64_t bytes = optimizer_state_bytes(row, {n}, r.states);
  items.push_back(
      {.id = "optimizer_states.textbook",
       .tenant = Tenant::optimizer_states,
       .label = fmt::format("Optimizer states ({})", row.name),
       .bytes = bytes,
       .formula = per_param_rate(n, static_cast<double>(bytes) / static_cast<double>(n)),
       .source = std::string(row.source),
       .live = kAllPhases,
       .estimated = false});
}

}  // namespace

void add_optimizer_states(const Context& ctx, Items& items) {
  if (ctx.plan.convention == Convention::textbook || ctx.plan.params_override > 0) {
    add_textbook(ctx, items);
    return;
  }
  const PrecisionRecipe& r = recipe(ctx.plan.precision);
  const OptimizerRow& row = optimizer_row(ctx.plan.optimizer);
  std::int64_t trainable = 0;
  std::int64_t state_bytes = 0;
  std::int64_t paged_bytes = 0;   // of state_bytes, in CUDA unified memory (paged rows)
  std::int64_t needs_master = 0;  // trainable params narrower than the master dtype
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (!g.trainable || g.mtp) continue;
    trainable += group_params(g);
    // A wider parameter (an fp32 adapter on a bf16 base) keeps states in its own dtype, and is
    // its own master: an optimizer steps it directly.
    const Dtype state_dtype =
        dtype_info(g.dtype).bits > dtype_info(r.states).bits ? g.dtype : r.states;
    const TensorUse use = tensor_use(g, ctx.spec, ctx.plan.behaviour.bnb_embeddings_32bit);
    state_bytes += optimizer_state_bytes(row, g.shape, state_dtype, use) * g.multiplicity;
    paged_bytes += paged_state_bytes(row, g.shape, use) * g.multiplicity;
    if (r.master && dtype_info(g.dtype).bits < dtype_info(*r.master).bits) {
      needs_master += group_params(g);
    }
  }
  if (trainable == 0) return;
  if (r.master && needs_master > 0) {
    items.push_back({.id = "master_weights.fp32",
                     .tenant = Tenant::master_weights,
                     .label = "Master weights, f32",
                     .bytes = dense_bytes(*r.master, needs_master),
                     .formula = per_param(needs_master, *r.master),
                     .source = std::string(r.source),
                     .live = kAllPhases,
                     .estimated = false});
  }
  if (paged_bytes > 0) {
    items.push_back(
        {.id = "optimizer_states.paged",
         .tenant = Tenant::optimizer_states,
         .label = fmt::format("Optimizer states ({}) in paged (unified) memory", row.name),
         .bytes = paged_bytes,
         .formula = fmt::format("state buffers of the tensors of at least {} "
                                "elements, {} B per element per state",
                                with_commas(kBnbPagedMinElements), paged_state_element_bytes(row)),
         .source = "bitsandbytes/optim/optimizer.py get_state_buffer (F.get_paged)",
         .live = state_phases(ctx.plan),
         .estimated = false});
  }
  const std::int64_t pooled = state_bytes - paged_bytes;
  if (pooled == 0) return;
  items.push_back(
      {.id = "optimizer_states.all",
       .tenant = Tenant::optimizer_states,
       .label = row.paged ? fmt::format("Optimizer states ({}) in PyTorch's pool: 8-bit absmax "
                                        "blocks and tensors under {} elements",
                                        row.name, with_commas(kBnbPagedMinElements))
                          : fmt::format("Optimizer states ({})", row.name),
       .bytes = pooled,
       .formula = fmt::format("{} trainable params, per tensor: {:.3f} B/param on average",
                              with_commas(trainable),
                              static_cast<double>(pooled) / static_cast<double>(trainable)),
       .source = row.paged ? "bitsandbytes/optim/optimizer.py init_state (torch.zeros absmax1/"
                             "absmax2) and get_state_buffer (zeros_like under 1e5 elements)"
                           : std::string(row.source),
       .live = state_phases(ctx.plan),
       .estimated = false});
}

}  // namespace trainmem::ledger

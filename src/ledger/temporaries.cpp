// Temporaries tenant: memory a phase allocates and frees, such as the optimizer step's scratch.
#include <fmt/format.h>

#include <algorithm>

#include "ledger/context.h"
#include "ledger/format.h"
#include "trainmem/optimizer.h"
#include "trainmem/precision.h"
#include "trainmem/units.h"

namespace trainmem::ledger {

void add_temporaries(const Context& ctx, Items& items) {
  if (ctx.plan.convention == Convention::textbook || ctx.plan.params_override > 0) return;
  std::int64_t total = 0;
  std::int64_t largest = 0;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (!g.trainable || g.mtp) continue;
    total += group_params(g);
    largest = std::max(largest, tensor_elements(g));
  }
  const OptimizerRow& row = optimizer_row(ctx.plan.optimizer);
  const Dtype dtype = recipe(ctx.plan.precision).states;
  const std::int64_t bytes =
      optimizer_step_scratch_bytes(row, ctx.plan.optimizer_impl, total, largest, dtype);
  if (bytes == 0) return;
  items.push_back(
      {Tenant::temporaries,
       fmt::format("Optimizer step scratch ({}, {})", row.name, name_of(ctx.plan.optimizer_impl)),
       bytes,
       fmt::format("{} trainable params, largest tensor {}", with_commas(total),
                   with_commas(largest)),
       std::string(row.source),
       phase_bit(0, Phase::optimizer_step) | phase_bit(1, Phase::optimizer_step), false});
}

}  // namespace trainmem::ledger

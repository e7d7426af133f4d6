// What every ledger tenant reads: the model as the plan leaves it, the plan, and the derived facts
// several tenants share. Each tenant file appends its lines; none reads another's.
#pragma once

#include <cstdint>
#include <vector>

#include "trainmem/estimate.h"
#include "trainmem/ledger.h"

namespace trainmem::ledger {

struct Context {
  const LoadedModel& model;
  const TrainingPlan& plan;
  ParameterInventory inventory;   // after apply_method (adapters appended, flags set)
  std::int64_t params_total = 0;  // base model, MTP excluded
  std::int64_t params_trainable = 0;
  // Textbook convention: the published (or --params) count the uniform rates apply to.
  std::int64_t params_priced = 0;
};

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

// Logits tenant: the b x s x V logits, and the loss's fp32 copies.
#include <fmt/format.h>

#include "ledger/context.h"
#include "ledger/format.h"

namespace trainmem::ledger {

void add_logits(const Context& ctx, Items& items) {
  const std::int64_t tokens = ctx.plan.batch * ctx.plan.seq;
  const std::int64_t vocab = ctx.model.spec.vocab;
  if (ctx.plan.convention == Convention::textbook) {
    // Seed 001: bf16 logits, batch x seq x vocab x 2.
    items.push_back(
        {Tenant::logits, "Logits, bf16", tokens * vocab * 2,
         fmt::format("{} batch x {} seq x {} vocab x 2 B", ctx.plan.batch, ctx.plan.seq, vocab),
         "seed 001: the logits tensor", kAllPhases, true});
    return;
  }
  // HF ForCausalLM loss: bf16 logits, fp32 upcast, log_softmax output, and in backward the fp32
  // grads: 12 x N x V bytes at the start of backward (research/accounting.md 4.2,
  // transformers/loss/loss_utils.py).
  const PhaseMask live = phase_bit(0, Phase::backward) | phase_bit(1, Phase::backward);
  items.push_back({Tenant::logits, "Logits and fp32 loss buffers", 12 * tokens * vocab,
                   fmt::format("12 B x {} tokens x {} vocab", tokens, vocab),
                   "transformers/loss/loss_utils.py ForCausalLMLoss", live, true});
}

}  // namespace trainmem::ledger

// Activations tenant: tensors autograd saves for backward.
#include <fmt/format.h>

#include "ledger/context.h"
#include "ledger/format.h"
#include "trainmem/units.h"

namespace trainmem::ledger {
namespace {

// Seed 001: with checkpointing one tensor per layer boundary is kept,
// layers x batch x seq x hidden x 2 bytes (bf16).
LedgerItem textbook_checkpointed(const Context& ctx) {
  const ModelSpec& s = ctx.model.spec;
  const std::int64_t bytes = s.layers * ctx.plan.batch * ctx.plan.seq * s.hidden * 2;
  return {Tenant::activations,
          "Activations, one hidden state per layer",
          bytes,
          fmt::format("{} layers x {} batch x {} seq x {} hidden x 2 B", s.layers, ctx.plan.batch,
                      ctx.plan.seq, s.hidden),
          "seed 001: checkpointed activations formula",
          kAllPhases,
          true};
}

// Per-token, per-layer saved bytes of a Llama-style decoder layer, full fine-tune, bf16, fused
// attention (research/accounting.md 2.6 from modeling_llama.py):
// 16h + 4ad + 4kv d + 8I + 4a + 8.
std::int64_t bytes_per_token_per_layer(const ModelSpec& s) {
  return 16 * s.hidden + 4 * s.heads * s.head_dim + 4 * s.kv_heads * s.head_dim +
         8 * s.intermediate + 4 * s.heads + 8;
}

}  // namespace

void add_activations(const Context& ctx, Items& items) {
  const bool textbook = ctx.plan.convention == Convention::textbook;
  if (textbook) {
    items.push_back(textbook_checkpointed(ctx));
    return;
  }
  const ModelSpec& s = ctx.model.spec;
  const std::int64_t tokens = ctx.plan.batch * ctx.plan.seq;
  const PhaseMask live = between(0, Phase::end_of_forward, Phase::backward) |
                         between(1, Phase::end_of_forward, Phase::backward);
  if (ctx.plan.checkpointing != Checkpointing::none) {
    const std::int64_t bytes = s.layers * tokens * s.hidden * 2;
    items.push_back(
        {Tenant::activations, "Checkpointed layer inputs", bytes,
         fmt::format("{} layers x {} tokens x {} hidden x 2 B", s.layers, tokens, s.hidden),
         "transformers GradientCheckpointingLayer: one input per layer", live, true});
    return;
  }
  const std::int64_t per = bytes_per_token_per_layer(s);
  items.push_back({Tenant::activations, "Saved activations, all layers", s.layers * tokens * per,
                   fmt::format("{} layers x {} tokens x {} B/token/layer", s.layers, tokens, per),
                   "research/accounting.md 2.6 (modeling_llama.py saved tensors)", live, true});
}

}  // namespace trainmem::ledger

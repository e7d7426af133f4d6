// Logits tenant: the b x s x V logits, the loss's fp32 copies and their gradients, per --loss.
// full: HF ForCausalLMLoss (transformers loss/loss_utils.py): logits.float() then cross_entropy
// = log_softmax (saves its fp32 output) + nll_loss. chunked: TRL's chunked NLL, one token chunk
// at a time. fused: Liger's fused linear cross-entropy (ops/fused_linear_cross_entropy.py).
#include <fmt/format.h>

#include <algorithm>

#include "ledger/context.h"
#include "ledger/format.h"
#include "ledger/phases.h"
#include "trainmem/units.h"

namespace trainmem::ledger {
namespace {

// Tokens per chunk of TRL's chunked NLL loss (an assumption: see the chunked case below).
constexpr std::int64_t kChunkedLossTokens = 1024;
constexpr const char* kLoss = "transformers loss/loss_utils.py ForCausalLMLoss; accounting.md 4.2";

std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The CE chain on `rows` tokens: logits in the compute dtype, the fp32 upcast, log_softmax's
// saved output, and at the start of backward the fp32 grads of nll_loss and log_softmax.
void full_chain(const Context& ctx, Items& items, std::int64_t rows, const std::string& what,
                PhaseMask forward_only, PhaseMask saved, PhaseMask bwd_start) {
  const std::int64_t v = ctx.model.spec.vocab;
  const int e = activation_settings(ctx.plan).compute_bytes;
  const std::string nv = fmt::format("{} tokens x {} vocab", with_commas(rows), with_commas(v));
  items.push_back({Tenant::logits,
                   fmt::format("{}logits, {} (lm_head output)", what, e == 4 ? "fp32" : "bf16"),
                   e * rows * v, fmt::format("{} x {} B", nv, e),
                   "transformers modeling_llama.py LlamaForCausalLM.forward", forward_only, false});
  if (ctx.model.spec.logit_softcap > 0) {
    // final_logit_softcapping: logits / cap, tanh (saves its output), * cap.
    items.push_back({Tenant::logits, fmt::format("{}soft-cap tanh output (saved)", what),
                     e * rows * v, fmt::format("{} x {} B", nv, e),
                     "transformers models/gemma2/modeling_gemma2.py final_logit_softcapping", saved,
                     false});
  }
  if (e != 4) {
    items.push_back({Tenant::logits, fmt::format("{}loss: fp32 upcast of the logits", what),
                     4 * rows * v, fmt::format("{} x 4 B", nv), kLoss, forward_only, false});
  }
  items.push_back({Tenant::logits, fmt::format("{}loss: log_softmax output, fp32 (saved)", what),
                   4 * rows * v, fmt::format("{} x 4 B", nv), kLoss, saved, false});
  items.push_back({Tenant::logits,
                   fmt::format("{}loss backward: fp32 grads of nll_loss and log_softmax", what),
                   8 * rows * v, fmt::format("{} x 2 x 4 B", nv), kLoss, bwd_start, false});
}

}  // namespace

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
  const PhaseMask fwd = in_phase(Phase::forward);
  const PhaseMask bstart = in_phase(Phase::backward_start);
  const PhaseMask saved = fwd | in_phase(Phase::end_of_forward) | bstart;
  switch (ctx.plan.loss) {
    case Loss::full:
      // Trainer.compute_loss returns only the loss, so the logits die before backward; a loop
      // that keeps outputs.logits adds e x N x V. accelerate's convert_outputs_to_fp32 copy
      // (mixed_precision="bf16") is made after the loss returns and its upcast is freed, so it
      // does not raise the forward peak (accounting.md 4.2).
      full_chain(ctx, items, tokens, "", fwd, saved, bstart);
      return;
    case Loss::chunked: {
      // TRL chunked NLL: lm_head + CE per chunk of tokens under checkpoint, so only one chunk's
      // chain is alive in forward and again (recomputed) in backward. Chunk: 1,024 tokens
      // (assumed; TRL's LossConfig chunk_token_size).
      const std::int64_t chunk = std::min<std::int64_t>(tokens, kChunkedLossTokens);
      full_chain(ctx, items, chunk, "Chunk of ", fwd, fwd | in_phase(Phase::backward_start),
                 bstart);
      return;
    }
    case Loss::fused: {
      // Liger FLCE: chunks of next_pow2(ceil(N / ceil(V/h))) tokens; grad_input (N x h) and,
      // when lm_head trains, grad_weight (V x h) are computed in forward and held for backward.
      const ModelSpec& s = ctx.model.spec;
      const int e = activation_settings(ctx.plan).compute_bytes;
      const std::int64_t chunk =
          std::min(tokens, next_pow2(ceil_div(tokens, ceil_div(vocab, s.hidden))));
      const char* src = "Liger-Kernel ops/fused_linear_cross_entropy.py";
      items.push_back(
          {Tenant::logits, "Fused CE: logits of one token chunk", e * chunk * vocab,
           fmt::format("{} tokens x {} vocab x {} B", with_commas(chunk), with_commas(vocab), e),
           src, fwd, false});
      items.push_back(
          {Tenant::logits, "Fused CE: grad_input held for backward", e * tokens * s.hidden,
           fmt::format("{} tokens x {} hidden x {} B", with_commas(tokens), s.hidden, e), src,
           saved, false});
      if (layer_activations(ctx).lm_head_trainable) {
        items.push_back(
            {Tenant::logits, "Fused CE: lm_head grad_weight made in forward", e * vocab * s.hidden,
             fmt::format("{} vocab x {} hidden x {} B", with_commas(vocab), s.hidden, e), src,
             saved, false});
      }
      return;
    }
  }
}

}  // namespace trainmem::ledger

// Logits tenant: the b x s x V logits, the loss's fp32 copies and their gradients, per --loss.
// full: HF ForCausalLMLoss (transformers loss/loss_utils.py): logits.float() then cross_entropy
// = log_softmax (saves its fp32 output) + nll_loss. chunked: TRL's chunked NLL, one token chunk
// at a time. fused: Liger's fused linear cross-entropy (ops/fused_linear_cross_entropy.py).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ledger/context.h"
#include "ledger/format.h"
#include "ledger/phases.h"
#include "model/dtype.h"
#include "plan/precision.h"
#include "trainmem/render.h"

namespace trainmem::ledger {
namespace {

// Tokens per chunk of TRL's chunked NLL loss: trl trainer/sft_trainer.py
// _CHUNKED_LM_HEAD_CHUNK_SIZE (trl >= 1.4).
constexpr std::int64_t kTrlChunkTokens = 256;
// What one chunk of that loss holds (trl_chunked_loss below; measured in
// validation/data/trl-chunked-loss-probe.json). Its chunk x vocab fp32 tensors alive together:
// in forward the logits, the log-probabilities, their exp and the entropy product; in backward
// the recomputed log-probabilities and probabilities and the gradients of the log-probabilities
// and of the logits.
constexpr std::int64_t kTrlChunkVocabTensors = 4;
// Its chunk x hidden fp32 tensors in backward: the hidden slice's fp32 copy and its gradient.
constexpr std::int64_t kTrlChunkHiddenTensors = 2;
// Kept per valid token besides its hidden state: the int64 reorder index and reordered label.
constexpr std::int64_t kTrlIndexBytesPerToken = 2 * 8;
constexpr std::int64_t kFp32Bytes = 4;
constexpr const char* kLoss = "transformers loss/loss_utils.py ForCausalLMLoss; accounting.md 4.2";

std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// What one run of the CE chain shares between its eager and compiled loss: the rows, the
// vocabulary, the dtypes and the pieces the lm_head and the loss run in.
struct Chain {
  std::int64_t rows = 0;
  std::int64_t v = 0;
  int e = 2;           // compute dtype
  int out_bytes = 2;   // dtype of the model's logits
  int loss_bytes = 4;  // dtype log_softmax runs in (eager)
  std::int64_t pieces = 1;
  std::int64_t piece_rows = 0;
  std::string nv;        // "N tokens x V vocab"
  std::string piece_nv;  // the same for one piece
  std::string what;      // label prefix ("Chunk of ")
  PhaseMask forward_only = 0;
  PhaseMask saved = 0;
  PhaseMask bwd_start = 0;
  // The loss's own tensors (its upcast and shift copies, its saved output): as forward_only and
  // saved, except where the loop computes the loss after the forward returned and a kept previous
  // step's logits were released (FrameworkBehaviour loss_in_model off with outputs_kept): then
  // they are not live in the forward slot, which holds the previous logits, but from the end of
  // forward.
  PhaseMask loss_forward = 0;
  PhaseMask loss_saved = 0;
};

// The lm_head's backward runs right after the loss's. It makes the head's weight gradient,
// vocab x hidden, while the logits' gradient (in the logits' dtype, once the upcast's backward
// has run) is alive; the log_softmax output and the nll gradient are freed by then (the engine
// frees a node's saved tensors and inputs when it has run). Accumulating, the new gradient is a
// second tensor beside the kept .grad until AccumulateGrad adds it in place
// (torch/csrc/autograd/functions/accumulate_grad.h). Under autocast the matmul reads a bf16 copy
// of the fp32 weight: its gradient is bf16 (A: beside the logits' gradient), then the cast's
// backward makes the fp32 one from it (B: the logits' gradient and the weight copy freed, the
// bf16 gradient in the copy's place), so that instant adds V x h x 4. When an untied lm_head
// trains (a tied head's gradient is held from here anyway: temporaries.cpp), the start of
// backward is the largest of these instants and the loss's; the head's win for a micro-batch of
// fewer than about h x g / 8 tokens. Measured: validation/data/head-backward.jsonl and
// holdout-3.jsonl (qwen3-tiny, fp32, 1 x 40 tokens, accumulation 2: -5.2 % before).
// The loss's instant at the start of backward: the saved log_softmax output and the gradients
// of nll_loss and log_softmax, each rows x vocab in the loss dtype (eager_loss below).
constexpr std::int64_t kLossBackwardTensors = 3;
struct HeadBackward {
  std::int64_t logits_grad = 0;  // the logits' gradient alive at that instant
  std::int64_t head_grad = 0;    // the head's new weight gradient(s), beyond what it replaces
  std::string formula;
};
std::optional<HeadBackward> head_backward(const Context& ctx, const Chain& c) {
  if (c.pieces != 1 || !c.what.empty() || ctx.spec.logit_softcap > 0) return std::nullopt;
  std::int64_t head = 0;
  bool fp32_weight = false;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (g.role == Role::lm_head && g.trainable && g.adapter == AdapterPart::none && !g.quantised) {
      head += group_params(g);
      fp32_weight = dtype_info(g.dtype).bits == 32;
    }
  }
  if (head == 0) return std::nullopt;
  const std::int64_t nv = c.rows * c.v;
  const int g = dtype_info(recipe(ctx.plan.precision).gradients).bits / 8;
  const std::string vh = fmt::format("{} vocab x {} hidden", with_commas(c.v), ctx.spec.hidden);
  HeadBackward at{c.out_bytes * nv, g * head, fmt::format("{} x {} B", vh, g)};
  if (activation_settings(ctx.plan).autocast && fp32_weight) {
    const HeadBackward mm{c.out_bytes * nv, c.e * head, fmt::format("{} x {} B", vh, c.e)};
    const HeadBackward cast{0, kFp32Bytes * head,
                            fmt::format("{} x {} B (fp32, from the bf16 one in the "
                                        "freed weight copy's place)",
                                        vh, kFp32Bytes)};
    at = mm.logits_grad + mm.head_grad >= cast.head_grad ? mm : cast;
  }
  if (at.logits_grad + at.head_grad <= kLossBackwardTensors * c.loss_bytes * nv) {
    return std::nullopt;
  }
  return at;
}

// The eager loss (FrameworkBehaviour::compiled_loss off): the shifted contiguous copy of older
// transformers, the fp32 upcast (per piece when chunked), log_softmax's saved output (every
// piece's, so chunking does not shrink it), and at the start of backward the grads of nll_loss
// and log_softmax for one piece.
void eager_loss(const Context& ctx, const Chain& c, Items& items) {
  const FrameworkBehaviour& b = ctx.plan.behaviour;
  if (b.loss_shift_copy) {
    items.push_back(
        {.id = "logits.shift_copy",
         .tenant = Tenant::logits,
         .label = fmt::format("{}loss: shifted contiguous copy of the logits", c.what),
         .bytes = c.loss_bytes * c.rows * c.v,
         .formula = fmt::format("{} x {} B", c.nv, c.loss_bytes),
         // Who copies (transformers < 4.49's ForCausalLMLoss, torchtune < 0.3's recipe) is the
         // profile's loss_shift_copy difference, cited in src/plan/framework.cpp.
         .source = "FrameworkBehaviour loss_shift_copy (src/plan/framework.cpp)",
         .live = c.loss_forward,
         .estimated = false});
  }
  if (c.loss_bytes == 4 && c.out_bytes != 4) {
    items.push_back(
        {.id = "logits.fp32_upcast",
         .tenant = Tenant::logits,
         .label = fmt::format("{}loss: fp32 upcast of the logits", c.what),
         .bytes = 4 * c.piece_rows * c.v,
         .formula = fmt::format("{} x 4 B", c.piece_nv),
         .source = c.pieces > 1 ? "torchtune modules/loss/ce_chunked_output_loss.py" : kLoss,
         .live = c.loss_forward,
         .estimated = false});
  }
  const std::optional<HeadBackward> head = head_backward(ctx, c);
  items.push_back(
      {.id = "logits.log_softmax",
       .tenant = Tenant::logits,
       .label = fmt::format("{}loss: log_softmax output, {} (saved)", c.what,
                            c.loss_bytes == 4 ? "fp32" : "bf16"),
       .bytes = c.loss_bytes * c.rows * c.v,
       .formula = fmt::format("{} x {} B", c.nv, c.loss_bytes),
       .source = c.loss_bytes == 4 ? kLoss : "litgpt utils.py chunked_cross_entropy (bf16 CE)",
       .live = head ? c.loss_saved & ~c.bwd_start : c.loss_saved,
       .estimated = false});
  if (head) {
    constexpr const char* kHead =
        "torch/csrc/autograd/functions/accumulate_grad.h; autograd engine frees a node's inputs "
        "once it has run";
    if (head->logits_grad > 0) {
      items.push_back({.id = "logits.grad_at_head_backward",
                       .tenant = Tenant::logits,
                       .label = "backward start (the lm_head's backward): the logits' gradient",
                       .bytes = head->logits_grad,
                       .formula = fmt::format("{} x {} B", c.nv, c.out_bytes),
                       .source = kHead,
                       .live = c.bwd_start,
                       .estimated = false});
    }
    items.push_back({.id = "temporaries.lm_head_gradient",
                     .tenant = Tenant::temporaries,
                     .label = "backward start (the lm_head's backward): its new weight gradient",
                     .bytes = head->head_grad,
                     .formula = head->formula,
                     .source = kHead,
                     .live = c.bwd_start,
                     .estimated = false});
    return;
  }
  items.push_back({.id = "logits.loss_grads",
                   .tenant = Tenant::logits,
                   .label = fmt::format("{}loss backward: grads of nll_loss and log_softmax{}",
                                        c.what, c.pieces > 1 ? " (one chunk)" : ""),
                   .bytes = 2 * c.loss_bytes * c.piece_rows * c.v,
                   .formula = fmt::format("{} x 2 x {} B", c.piece_nv, c.loss_bytes),
                   .source = kLoss,
                   .live = c.bwd_start,
                   .estimated = false});
}

// The compiled loss (FrameworkBehaviour::compiled_loss): inductor fuses
// `cross_entropy(logits.float(), labels)` into one reduction, so there is no fp32 upcast, no
// shifted copy and no log_softmax output; it saves the logits themselves (logits.output stays
// live, full_chain), the labels (the batch's, not a line) and two fp32 values per row, the row
// max and the logsumexp; its backward writes one gradient in the logits' dtype, per piece when
// the loss is chunked (torchtune compiles CEWithChunkedOutputLoss.compute_cross_entropy, one
// call per chunk: torchtune@30b8519e training/_compile.py:68-71). Measured on CPU
// (validation/compile_loss_probe.py; validation/data/compile-loss-probe-torch2.5.1.json and
// -torch2.4.1.json): torch 2.4's backward also fills an fp32 one-hot of the piece (4 B per logit),
// which 2.5 folds into the kernel; the line prices torch >= 2.5 (docs/frameworks.md).
void compiled_loss(const Chain& c, Items& items) {
  const char* probe = "torch.compile (inductor) cross_entropy: validation/compile_loss_probe.py";
  items.push_back(
      {.id = "logits.compiled_row_stats",
       .tenant = Tenant::logits,
       .label = fmt::format("{}compiled loss: row max and logsumexp, fp32 (saved)", c.what),
       .bytes = 2 * 4 * c.rows,
       .formula = fmt::format("{} tokens x 2 x 4 B", with_commas(c.rows)),
       .source = probe,
       .live = c.loss_saved,
       .estimated = false});
  items.push_back(
      {.id = "logits.loss_grads",
       .tenant = Tenant::logits,
       .label = fmt::format("{}compiled loss backward: grad of the logits, {}{}", c.what,
                            c.out_bytes == 4 ? "fp32" : "bf16", c.pieces > 1 ? " (one chunk)" : ""),
       .bytes = c.out_bytes * c.piece_rows * c.v,
       .formula = fmt::format("{} x {} B", c.piece_nv, c.out_bytes),
       .source = probe,
       .live = c.bwd_start,
       .estimated = false});
}

// The CE chain on `rows` tokens, as the framework runs it (FrameworkBehaviour): the lm_head
// output (fp32 when the model upcasts it), the loss (eager_loss or compiled_loss) and the
// metric's copy. The logits live in forward only when the loop drops the model output (HF
// Trainer.compute_loss returns only the loss; torchtune `del logits`) and the eager loss keeps
// only its own fp32 copies; until the loss's backward when the compiled loss saves them; and
// through the step when the loop keeps them (litgpt, plain `out = model(...)` loops), where the
// previous step's logits are still referenced while the next forward runs.
void full_chain(const Context& ctx, Items& items, std::int64_t rows, const std::string& what,
                PhaseMask forward_only, PhaseMask saved, PhaseMask bwd_start) {
  const FrameworkBehaviour& b = ctx.plan.behaviour;
  Chain c;
  c.rows = rows;
  c.v = ctx.spec.vocab;
  c.e = activation_settings(ctx.plan).compute_bytes;
  c.out_bytes = b.fp32_logits_in_model ? 4 : c.e;
  c.loss_bytes = b.loss_upcast ? 4 : c.out_bytes;
  c.pieces = what.empty() ? loss_pieces(b, ctx.plan.seq) : 1;
  c.piece_rows = ceil_div(rows, c.pieces);
  c.nv = fmt::format("{} tokens x {} vocab", with_commas(rows), with_commas(c.v));
  c.piece_nv = c.pieces > 1 ? fmt::format("{} tokens (1 of {} chunks) x {} vocab",
                                          with_commas(c.piece_rows), c.pieces, with_commas(c.v))
                            : c.nv;
  c.what = what;
  c.forward_only = forward_only;
  c.saved = saved;
  c.bwd_start = bwd_start;
  c.loss_forward = forward_only;
  c.loss_saved = saved;
  if (b.outputs_kept && !b.loss_in_model) {
    c.loss_forward = in_phase(Phase::end_of_forward);
    c.loss_saved = saved & ~forward_only;
  }
  const char* fw = "FrameworkBehaviour (docs/frameworks.md)";
  const PhaseMask kept = from_phase(0, Phase::forward);
  items.push_back(
      {.id = std::string(kLogitsOutputId),
       .tenant = Tenant::logits,
       .label =
           fmt::format("{}logits, {} (lm_head output{})", what, c.out_bytes == 4 ? "fp32" : "bf16",
                       b.outputs_kept    ? ", kept by the loop through the step"
                       : b.compiled_loss ? ", saved by the compiled loss"
                                         : ""),
       .bytes = c.out_bytes * rows * c.v,
       .formula = fmt::format("{} x {} B", c.nv, c.out_bytes),
       // Who upcasts (transformers < 4.46, or Fabric's bf16-true around litgpt) is the profile's
       // fp32_logits_in_model difference, cited in src/plan/framework.cpp.
       .source = b.fp32_logits_in_model
                     ? "FrameworkBehaviour fp32_logits_in_model (src/plan/framework.cpp)"
                     : "transformers modeling_llama.py LlamaForCausalLM.forward",
       .live = b.outputs_kept    ? kept
               : b.compiled_loss ? saved
                                 : forward_only,
       .estimated = false});
  if (b.outputs_kept) {
    items.push_back({.id = std::string(kPreviousLogitsOutputId),
                     .tenant = Tenant::logits,
                     .label = fmt::format("{}previous step's logits, until forward returns", what),
                     .bytes = c.out_bytes * rows * c.v,
                     .formula = fmt::format("{} x {} B", c.nv, c.out_bytes),
                     .source = fw,
                     .live = phase_bit(1, Phase::forward),
                     .estimated = false});
  }
  if (b.fp32_logits_in_model && !b.loss_in_model && c.e != 4) {
    // The lm_head returns the compute dtype and the model or its wrapper converts it to fp32
    // (torchtune's `.float()`, Fabric's convert_output over litgpt's list of chunks): the whole
    // output in its own dtype is live beside the fp32 copy, and beside the previous step's logits
    // that a loop keeps. Where the model computes the loss, its fp32 tensors come later in the
    // same slot and are larger.
    items.push_back(
        {.id = "logits.output_before_fp32",
         .tenant = Tenant::logits,
         .label = fmt::format("{}lm_head output in the compute dtype, until converted to "
                              "fp32",
                              what),
         .bytes = c.e * rows * c.v,
         .formula = fmt::format("{} x {} B", c.nv, c.e),
         .source = "FrameworkBehaviour fp32_logits_in_model (src/plan/framework.cpp)",
         .live = forward_only,
         .estimated = false});
  }
  if (ctx.spec.logit_softcap > 0) {
    // final_logit_softcapping: logits / cap, tanh (saves its output), * cap.
    items.push_back(
        {.id = "logits.soft_cap",
         .tenant = Tenant::logits,
         .label = fmt::format("{}soft-cap tanh output (saved)", what),
         .bytes = c.e * rows * c.v,
         .formula = fmt::format("{} x {} B", c.nv, c.e),
         .source = "transformers models/gemma2/modeling_gemma2.py final_logit_softcapping",
         .live = saved,
         .estimated = false});
  }
  if (b.compiled_loss) {
    compiled_loss(c, items);
  } else {
    eager_loss(ctx, c, items);
  }
  if (b.metrics_logits_copy) {
    items.push_back(
        {.id = "logits.metrics_copy",
         .tenant = Tenant::logits,
         .label = fmt::format("{}token-accuracy metric: shifted logits copy", what),
         .bytes = c.out_bytes * rows * c.v,
         .formula = fmt::format("{} x {} B", c.nv, c.out_bytes),
         .source = "trl trainer/sft_trainer.py SFTTrainer.compute_loss (mean_token_accuracy)",
         .live = forward_only,
         .estimated = false});
  }
}

// TRL's chunked_nll (trl >= 1.4 trainer/sft_trainer.py _chunked_cross_entropy_loss; the SFT default
// from 1.7): the shifted tokens' hidden states are reordered into a copy (valid tokens first) that
// the chunks' checkpoints keep, with the order and the labels (int64 each); each chunk of 256 runs
// `h.float() @ w.float().t()`, log_softmax, nll_loss, argmax and the entropy -(p log p) in fp32
// under torch.utils.checkpoint, once in forward and again in backward. No logits of the whole
// batch exist. Measured on CPU without autocast (validation/trl_chunked_loss_probe.py, data in
// validation/data/trl-chunked-loss-probe.json): the forward chunk peaks at its four fp32 chunk x V
// tensors or, at the matmul, at the fp32 weight copy with the chunk's hidden slice and logits; the
// backward chunk holds the weight copy, four chunk x V tensors and two fp32 hidden slices, and the
// copy's fp32 gradient when the lm_head trains (an upper bound there: measured 6-8 % lower, the
// peak moving between the matmul's backward and the cast back). Every shifted token is counted as
// valid (completion-only masks lower it). Under autocast (fp32 weights) `w.float()` copies nothing
// but the matmul casts the weight to bf16: that copy is priced instead, not measured.
void trl_chunked_loss(const Context& ctx, Items& items, PhaseMask fwd, PhaseMask saved,
                      PhaseMask bstart) {
  const ModelSpec& s = ctx.spec;
  const ActivationSettings& a = ctx.layers.settings;
  const std::int64_t v = s.vocab;
  const std::int64_t h = s.hidden;
  const std::int64_t valid = ctx.plan.batch * (ctx.plan.seq - 1);
  const std::int64_t c = std::min(valid, kTrlChunkTokens);
  // The lm_head weight is fp32 when the precision keeps fp32 weights, or when PEFT's
  // prepare_model_for_kbit_training upcast the 16-bit params of a QLoRA model.
  const bool head_fp32 = recipe(ctx.plan.precision).weights == Dtype::f32 ||
                         (ctx.plan.method == Method::qlora && ctx.plan.quant.prepare_kbit);
  // w.float() copies a 16-bit weight; an fp32 one it returns as is, and under autocast the
  // matmul casts it to the compute dtype instead.
  const std::int64_t copy_bytes = head_fp32 ? (a.autocast ? a.compute_bytes : 0) : kFp32Bytes;
  const std::int64_t weight_copy = copy_bytes * v * h;
  const std::int64_t weight_grad = ctx.layers.lm_head_trainable ? weight_copy : 0;
  const char* src =
      "trl v1.9.0 trainer/sft_trainer.py _chunked_cross_entropy_loss, _chunk; measured: "
      "validation/trl_chunked_loss_probe.py";
  const std::string vh = fmt::format("{} vocab x {} hidden x {} B", with_commas(v), h, copy_bytes);
  items.push_back(
      {.id = "logits.chunked_hidden",
       .tenant = Tenant::logits,
       .label = "TRL chunked loss: the valid tokens' hidden states, reordered, with their order "
                "and labels (kept for the chunks' recompute)",
       .bytes = a.stream_bytes * valid * h + kTrlIndexBytesPerToken * valid,
       .formula = fmt::format("{} tokens x ({} hidden x {} B + {} B)", with_commas(valid), h,
                              a.stream_bytes, kTrlIndexBytesPerToken),
       .source = src,
       .live = saved,
       .estimated = false});
  const std::int64_t entropy_stage = kTrlChunkVocabTensors * kFp32Bytes * c * v;
  const std::int64_t matmul_stage = weight_copy + kFp32Bytes * c * (h + v);
  // The final norm's output stays referenced while the loss runs. The full loss's lm_head saves
  // it only when the lm_head trains (activations.final_norm_head_input), which this loss does not
  // (ActivationSettings::head_saves_input): in that case it is counted here, for forward.
  const std::int64_t norm_output =
      ctx.layers.lm_head_trainable ? a.stream_bytes * ctx.plan.batch * ctx.plan.seq * h : 0;
  items.push_back(
      {.id = "logits.chunked_forward",
       .tenant = Tenant::logits,
       .label = fmt::format("TRL chunked loss: one chunk of {} tokens in fp32 (forward)", c),
       .bytes = std::max(entropy_stage, matmul_stage) + norm_output,
       .formula = fmt::format(
           "max({} tokens x {} vocab x {} fp32 tensors x 4 B, {}{} tokens x ({} hidden + {} vocab) "
           "x 4 B){}",
           c, with_commas(v), kTrlChunkVocabTensors,
           weight_copy > 0 ? "lm_head weight copy " + vh + " + " : "", c, h, with_commas(v),
           norm_output > 0
               ? fmt::format(" + the final norm's output, {} tokens x {} hidden x {} B",
                             with_commas(ctx.plan.batch * ctx.plan.seq), h, a.stream_bytes)
               : ""),
       .source = src,
       .live = fwd,
       .estimated = a.autocast});
  items.push_back(
      {.id = "logits.chunked_backward",
       .tenant = Tenant::logits,
       .label = fmt::format("TRL chunked loss: one chunk of {} tokens recomputed, with its "
                            "gradients (backward)",
                            c),
       .bytes = weight_copy + weight_grad +
                kFp32Bytes * c * (kTrlChunkVocabTensors * v + kTrlChunkHiddenTensors * h),
       .formula = fmt::format("{}{}{} tokens x ({} x {} vocab + {} x {} hidden) x 4 B",
                              weight_copy > 0 ? "lm_head weight copy " + vh + " + " : "",
                              weight_grad > 0 ? "its gradient " + vh + " + " : "", c,
                              kTrlChunkVocabTensors, with_commas(v), kTrlChunkHiddenTensors, h),
       .source = src,
       .live = bstart,
       .estimated = a.autocast || weight_grad > 0});
}

}  // namespace

std::int64_t loss_pieces(const FrameworkBehaviour& b, std::int64_t seq) {
  if (b.loss_chunks > 0) return std::min(b.loss_chunks, seq);
  if (b.loss_chunk_positions > 0) return ceil_div(seq, b.loss_chunk_positions);
  return 1;
}

void add_logits(const Context& ctx, Items& items) {
  const std::int64_t tokens = ctx.plan.batch * ctx.plan.seq;
  const std::int64_t vocab = ctx.spec.vocab;
  if (ctx.plan.convention == Convention::textbook) {
    // Seed 001: bf16 logits, batch x seq x vocab x 2.
    items.push_back({.id = "logits.textbook",
                     .tenant = Tenant::logits,
                     .label = "Logits, bf16",
                     .bytes = tokens * vocab * 2,
                     .formula = fmt::format("{} batch x {} seq x {} vocab x 2 B", ctx.plan.batch,
                                            ctx.plan.seq, vocab),
                     .source = "seed 001: the logits tensor",
                     .live = kAllPhases,
                     .estimated = true});
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
    case Loss::chunked:
      trl_chunked_loss(ctx, items, fwd, saved, bstart);
      return;
    case Loss::fused: {
      // Liger FLCE: chunks of next_pow2(ceil(N / ceil(V/h))) tokens; grad_input (N x h) and,
      // when lm_head trains, grad_weight (V x h) are computed in forward and held for backward.
      const ModelSpec& s = ctx.spec;
      const int e = activation_settings(ctx.plan).compute_bytes;
      const std::int64_t chunk =
          std::min(tokens, next_pow2(ceil_div(tokens, ceil_div(vocab, s.hidden))));
      const char* src = "Liger-Kernel ops/fused_linear_cross_entropy.py";
      items.push_back({.id = "logits.fused_chunk",
                       .tenant = Tenant::logits,
                       .label = "Fused CE: logits of one token chunk",
                       .bytes = e * chunk * vocab,
                       .formula = fmt::format("{} tokens x {} vocab x {} B", with_commas(chunk),
                                              with_commas(vocab), e),
                       .source = src,
                       .live = fwd,
                       .estimated = false});
      items.push_back(
          {.id = "logits.fused_grad_input",
           .tenant = Tenant::logits,
           .label = "Fused CE: grad_input held for backward",
           .bytes = e * tokens * s.hidden,
           .formula = fmt::format("{} tokens x {} hidden x {} B", with_commas(tokens), s.hidden, e),
           .source = src,
           .live = saved,
           .estimated = false});
      if (ctx.layers.lm_head_trainable) {
        items.push_back(
            {.id = "logits.fused_grad_weight",
             .tenant = Tenant::logits,
             .label = "Fused CE: lm_head grad_weight made in forward",
             .bytes = e * vocab * s.hidden,
             .formula = fmt::format("{} vocab x {} hidden x {} B", with_commas(vocab), s.hidden, e),
             .source = src,
             .live = saved,
             .estimated = false});
      }
      return;
    }
  }
}

}  // namespace trainmem::ledger

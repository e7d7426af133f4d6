// Temporaries tenant: memory a phase allocates and frees: the optimizer step's scratch, one
// layer's backward transient, autocast's bf16 weight copies, QLoRA's dequantised weight, and the
// tied embedding's second gradient.
#include <fmt/format.h>

#include <algorithm>

#include "ledger/context.h"
#include "ledger/format.h"
#include "ledger/phases.h"
#include "model/dtype.h"
#include "model/inventory.h"
#include "model/model_spec.h"
#include "plan/method.h"
#include "plan/optimizer.h"
#include "plan/precision.h"
#include "trainmem/render.h"

namespace trainmem::ledger {
namespace {

bool is_adapter_group(const TensorGroup& g) {
  return g.adapter != AdapterPart::none;
}

// The optimizer step's scratch, priced per state dtype: a parameter wider than the recipe's state
// dtype keeps its own (PEFT's fp32 adapters under pure bf16, as the states tenant prices them),
// and torch/optim/adamw.py's _foreach_sqrt returns v's dtype.
void optimizer_scratch(const Context& ctx, Items& items) {
  struct ByDtype {
    Dtype dtype;
    std::int64_t total = 0;
    std::int64_t largest = 0;
  };
  std::vector<ByDtype> by_dtype;
  const Dtype recipe_states = recipe(ctx.plan.precision).states;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (!g.trainable || g.mtp) continue;
    const Dtype d =
        dtype_info(g.dtype).bits > dtype_info(recipe_states).bits ? g.dtype : recipe_states;
    auto it = std::find_if(by_dtype.begin(), by_dtype.end(),
                           [&](const ByDtype& b) { return b.dtype == d; });
    if (it == by_dtype.end()) it = by_dtype.insert(by_dtype.end(), {d});
    it->total += group_params(g);
    it->largest = std::max(it->largest, tensor_elements(g));
  }
  const OptimizerRow& row = optimizer_row(ctx.plan.optimizer);
  // Stepping in backward runs one parameter at a time, like the for-loop implementation.
  const bool in_bwd = ctx.plan.behaviour.optimizer_in_backward;
  const OptimizerImpl impl = in_bwd ? OptimizerImpl::for_loop : ctx.plan.optimizer_impl;
  // Whole-group scratch adds up over dtypes; one-tensor-at-a-time scratch is the largest one's.
  const bool per_tensor = impl != OptimizerImpl::foreach || row.kind != OptimizerKind::adamw;
  std::int64_t bytes = 0;
  std::string formula;
  for (const ByDtype& b : by_dtype) {
    const std::int64_t part = optimizer_step_scratch_bytes(row, impl, b.total, b.largest, b.dtype);
    if (part == 0 || (per_tensor && part <= bytes)) continue;
    const std::string f = optimizer_step_scratch_formula(row, impl, b.total, b.largest, b.dtype);
    bytes = per_tensor ? part : bytes + part;
    formula = per_tensor || formula.empty() ? f : formula + " + " + f;
  }
  if (bytes == 0) return;
  items.push_back(
      {.id = "temporaries.optimizer_step",
       .tenant = Tenant::temporaries,
       // The implementation matters to AdamW only (foreach, fused, for-loop).
       .label = row.kind == OptimizerKind::adamw
                    ? fmt::format("Optimizer step scratch ({}, {})", row.name, name_of(impl))
                    : fmt::format("Optimizer step scratch ({})", row.name),
       .bytes = bytes,
       .formula = formula,
       .source = std::string(row.source),
       .live = in_bwd ? late_backward() : in_phase(Phase::optimizer_step),
       .estimated = false});
}

// Inside one layer's backward: the MLP's gate and up gradients coexist with what the layer still
// holds (accounting.md 2.7); eager softmax backward adds 10 B per score (bf16 grad, its fp32
// copy, softmax_backward's fp32 result).
void backward_transient(const Context& ctx, const LayerActivations& la, Items& items) {
  if (!la.any_requires_grad) return;
  const ModelSpec& s = ctx.spec;
  std::int64_t bytes = 0;
  std::int64_t layer = 0;
  for (std::int64_t i = 0; i < s.layers; ++i) {
    const std::int64_t b =
        layer_backward_transient_bytes(s, i, la.settings, ctx.plan.batch, ctx.plan.seq);
    if (b > bytes) {
      bytes = b;
      layer = i;
    }
  }
  const bool moe = is_moe_layer(s, layer);
  const std::int64_t width = moe ? s.moe.top_k * s.moe.expert_intermediate : s.intermediate;
  std::string formula =
      fmt::format("2 x {} tokens x {} {} x {} B", with_commas(ctx.plan.batch * ctx.plan.seq), width,
                  moe ? "(top_k x expert width)" : "intermediate", la.settings.compute_bytes);
  if (ctx.plan.attention == Attention::eager) {
    formula +=
        fmt::format(" + {} x {} heads x {}^2 scores x 10 B", ctx.plan.batch, s.heads, ctx.plan.seq);
  }
  items.push_back({.id = "temporaries.backward_transient",
                   .tenant = Tenant::temporaries,
                   .label = "Backward transient inside one layer",
                   .bytes = bytes,
                   .formula = formula,
                   .source = "accounting.md 2.7 (LlamaMLP and softmax backward)",
                   .live = late_backward(),
                   .estimated = true});
}

// The line for autocast_copies() below.
void autocast_weights(const Context& ctx, Items& items) {
  const AutocastCopies c = autocast_copies(ctx);
  if (c.params == 0) return;
  const std::int64_t head_recasts = c.further_head_pieces * c.frozen_head_params;
  const std::string formula =
      head_recasts == 0
          ? fmt::format("{} matmul weight params x 2 B", with_commas(c.params))
          : fmt::format(
                "({} matmul weight params + {} further pieces x {} frozen lm_head params) "
                "x 2 B",
                with_commas(c.params), c.further_head_pieces, with_commas(c.frozen_head_params));
  items.push_back({.id = std::string(kAutocastCopiesId),
                   .tenant = Tenant::temporaries,
                   .label = "Autocast bf16 copies of the fp32 weights",
                   .bytes = 2 * (c.params + head_recasts),
                   .formula = formula,
                   .source = "PyTorch aten/src/ATen/autocast_mode.cpp cached_cast; accounting.md 6",
                   .live = forward_to_backward_start(),
                   .estimated = true});
}

// bitsandbytes Linear4bit dequantises the largest 4-bit weight to the compute dtype in forward
// and again in backward for grad_input (bnb <= 0.49 always; >= 0.50 for more than 1,536 rows),
// plus its fp32 absmax (bitsandbytes autograd/_functions.py MatMul4Bit, backends/cuda/ops.py).
// dequantize_4bit writes the dtype the weight was quantised from (quant_state.dtype,
// functional.py dequantize_4bit: torch.empty(quant_state.shape, dtype=quant_state.dtype)), then
// MatMul4Bit casts it with `.to(A.dtype)`: Lightning quantises through an fp16 copy
// (LoadQuantiser::lightning_bnb), so under bf16 compute both the fp16 and the bf16 copy are live.
void dequantised_weight(const Context& ctx, Items& items) {
  if (ctx.plan.method != Method::qlora) return;
  std::int64_t largest = 0;
  bool any_marked = false;
  for (const TensorGroup& g : ctx.inventory.groups) any_marked = any_marked || g.quantised;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (g.mtp || is_adapter_group(g)) continue;
    const bool quantised = any_marked ? g.quantised : (is_linear_weight(g) && g.layer_first >= 0);
    if (quantised) largest = std::max(largest, tensor_elements(g));
  }
  if (largest == 0) return;
  const std::int64_t block = std::max<std::int64_t>(1, ctx.plan.quant.block_size);
  const std::int64_t blocks = (largest + block - 1) / block;
  const Dtype compute = recipe(ctx.plan.precision).compute;
  const bool fp16_then_cast =
      ctx.plan.behaviour.load_quantiser == LoadQuantiser::lightning_bnb && compute != Dtype::f16;
  const int compute_bytes = dtype_info(compute).bits / 8;
  const std::int64_t copy_bytes = fp16_then_cast ? 2 + compute_bytes : compute_bytes;
  const std::int64_t bytes = copy_bytes * largest + 4 * blocks;
  const std::string copies =
      fp16_then_cast ? fmt::format("(2 B fp16 as quantised + {} B {} cast)", compute_bytes,
                                   dtype_info(compute).name)
                     : fmt::format("{} B ({})", compute_bytes, dtype_info(compute).name);
  items.push_back(
      {.id = "temporaries.dequantised_weight",
       .tenant = Tenant::temporaries,
       .label = "QLoRA: dequantised copy of the largest 4-bit weight",
       .bytes = bytes,
       .formula = fmt::format("{} elements x {} + absmax {} blocks x 4 B", with_commas(largest),
                              copies, with_commas(blocks)),
       .source =
           "bitsandbytes autograd/_functions.py MatMul4Bit (dequantize_4bit(...).to(A.dtype))",
       .live = forward_to_backward_start() | late_backward(),
       .estimated = false});
}

// A tied embedding receives two dense V x h gradients, lm_head's at the start of backward and the
// embedding's at its very end. The autograd engine holds the first in the input buffer of the
// weight's AccumulateGrad node (it has two producers) and adds the second to it there:
// torch/csrc/autograd/input_buffer.cpp accumulate() adds in place only into a tensor whose last
// reference it holds (can_accumulate_inplace), and lm_head's gradient is a transposed view of its
// matmul's output, so it adds out of place (`old_var + var`). At that moment the embedding's dense
// gradient and the sum are both live beside the held gradient, which the gradients line counts;
// then the two addends are freed and the sum becomes `.grad`. Traced on CPU with real tensors
// (validation/data/alloc-traces/, e.g. Llama-3.2-1B's full fine-tune at 1 x 1,024 tokens, where
// this is the step's allocated peak).
void tied_embedding_grad(const Context& ctx, Items& items) {
  const ModelSpec& s = ctx.spec;
  // A framework with its own lm_head (unties_embeddings) gives the embedding one gradient.
  if (!s.tied_embeddings || ctx.plan.behaviour.unties_embeddings) return;
  bool trains = false;
  for (const TensorGroup& g : ctx.inventory.groups) {
    trains = trains || trains_embedding_tensor(g);
  }
  if (!trains) return;
  const Dtype d = recipe(ctx.plan.precision).gradients;
  items.push_back(
      {.id = std::string(kTiedEmbeddingGradId),
       .tenant = Tenant::temporaries,
       .label = "Tied embedding: its dense gradient and the out-of-place sum with lm_head's",
       .bytes = kTiedAccumulationTensors * dense_bytes(d, s.vocab * s.hidden),
       .formula = fmt::format("{} x {} vocab x {} hidden x {} B", kTiedAccumulationTensors,
                              with_commas(s.vocab), s.hidden, dtype_info(d).bits / 8),
       .source = "torch/csrc/autograd/input_buffer.cpp accumulate (old_var + var)",
       .live = in_phase(Phase::end_of_backward),
       .estimated = false});
}

}  // namespace

namespace {

// Whether the matmul of `g` (a layer's weight, or its adapter) in `layer` reads an input that
// requires grad. lora_B reads lora_A's output, which does; lora_A and the base weight read the
// projection's input.
bool keeps_copy(const LayerActivations& la, const TensorGroup& g, std::int64_t layer) {
  const auto i = static_cast<std::size_t>(layer);
  if (i >= la.layer_count() || !la.needs_input[i]) return false;
  if (g.adapter == AdapterPart::lora_b || g.adapter == AdapterPart::magnitude) return true;
  return la.grad_input(i, g.role);
}

// `g` cut to the runs of its layers that keep their copy; whole when its tensors do not divide
// evenly over its layers (then kept if any layer keeps it).
void add_kept_layers(const LayerActivations& la, const TensorGroup& g, AutocastCopies& c) {
  const std::int64_t layers = g.layer_last - g.layer_first + 1;
  if (layers <= 0 || g.multiplicity % layers != 0) {
    for (std::int64_t i = g.layer_first; i <= g.layer_last; ++i) {
      if (keeps_copy(la, g, i)) {
        c.groups.push_back(g);
        c.params += group_params(g);
        return;
      }
    }
    return;
  }
  const std::int64_t per_layer = g.multiplicity / layers;
  for (std::int64_t i = g.layer_first; i <= g.layer_last;) {
    if (!keeps_copy(la, g, i)) {
      ++i;
      continue;
    }
    std::int64_t last = i;
    while (last + 1 <= g.layer_last && keeps_copy(la, g, last + 1)) ++last;
    TensorGroup run = g;
    run.layer_first = i;
    run.layer_last = last;
    run.multiplicity = per_layer * (last - i + 1);
    c.params += group_params(run);
    c.groups.push_back(std::move(run));
    i = last + 1;
  }
}

}  // namespace

// torch.autocast caches one bf16 copy of every fp32 trainable weight it casts, and a frozen fp32
// weight is re-cast at every use; mm saves the cast weight while its input requires grad, so the
// copies live from forward to that layer's backward (aten/src/ATen/autocast_mode.cpp cached_cast:
// only a leaf that requires grad is cached). A matmul whose input needs no grad keeps nothing
// (derivatives.yaml: mm's self gradient reads mat2): in litgpt's bf16-mixed LoRA on q and v, the
// first layer's qkv, and in a parallel block its MLP, are cast and freed (CPU saved-tensor dump of
// litgpt 0.4.13's GPT-NeoX layers, docs/accuracy.md). A frozen lm_head that runs in pieces
// (litgpt's lm_head_chunk_size) is cast once per piece, and every piece's matmul keeps its copy.
AutocastCopies autocast_copies(const Context& ctx) {
  AutocastCopies c;
  const LayerActivations& la = ctx.layers;
  if (!la.settings.autocast) return c;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (g.mtp || g.quantised || dtype_info(g.dtype).bits != 32) continue;
    const bool linear = is_linear_weight(g) || g.role == Role::lm_head || is_adapter_group(g) ||
                        (g.role == Role::embedding && ctx.spec.tied_embeddings &&
                         !ctx.plan.behaviour.unties_embeddings && !g.module_copy);
    if (!linear) continue;
    // transformers 5's fused experts run grouped_mm, which autocast does not cast
    // (integrations/moe.py _grouped_mm): nothing of theirs is copied.
    if (g.expert == ExpertKind::routed && !ctx.plan.behaviour.experts_as_linears) continue;
    // Inside a checkpointed layer, saved tensors are dropped and recomputed, so only the
    // weights outside the layers (lm_head) keep their copy to backward.
    if (g.layer_first >= 0 && ctx.plan.checkpointing == Checkpointing::full) continue;
    if (g.layer_first >= 0) {
      // Only matmuls that see an input that requires grad keep the copy.
      add_kept_layers(la, g, c);
      continue;
    }
    if (g.role == Role::embedding && !la.any_requires_grad) continue;
    c.groups.push_back(g);
    c.params += group_params(g);
    if (g.layer_first < 0 && !is_adapter_group(g) && !g.trainable) {
      c.frozen_head_params += group_params(g);
    }
  }
  if (c.frozen_head_params > 0) {
    c.further_head_pieces = loss_pieces(ctx.plan.behaviour, ctx.plan.seq) - 1;
  }
  return c;
}

void add_temporaries(const Context& ctx, Items& items) {
  if (ctx.plan.convention == Convention::textbook || ctx.plan.params_override > 0) return;
  optimizer_scratch(ctx, items);
  const LayerActivations& la = ctx.layers;
  backward_transient(ctx, la, items);
  autocast_weights(ctx, items);
  dequantised_weight(ctx, items);
  tied_embedding_grad(ctx, items);
}

}  // namespace trainmem::ledger

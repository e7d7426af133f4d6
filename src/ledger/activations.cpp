// Activations tenant: tensors autograd saves for backward. The exact convention sums the named
// per-layer terms of activation_model.h; the textbook keeps seed 001's one hidden state per layer.
#include <fmt/format.h>

#include <algorithm>

#include "ledger/activation_model.h"
#include "ledger/context.h"
#include "ledger/format.h"
#include "ledger/phases.h"
#include "model/model_spec.h"
#include "plan/framework.h"
#include "plan/method.h"
#include "trainmem/render.h"
#include "util/checked.h"

namespace trainmem::ledger {
namespace {

// Seed 001: with checkpointing one tensor per layer boundary is kept,
// layers x batch x seq x hidden x 2 bytes (bf16).
LedgerItem textbook_checkpointed(const Context& ctx) {
  const ModelSpec& s = ctx.spec;
  const std::int64_t bytes = s.layers * ctx.plan.batch * ctx.plan.seq * s.hidden * 2;
  return {.id = "activations.textbook",
          .tenant = Tenant::activations,
          .label = "Activations, one hidden state per layer",
          .bytes = bytes,
          .formula = fmt::format("{} layers x {} batch x {} seq x {} hidden x 2 B", s.layers,
                                 ctx.plan.batch, ctx.plan.seq, s.hidden),
          .source = "seed 001: checkpointed activations formula",
          .live = kAllPhases,
          .estimated = true};
}

std::vector<ActivationTerm> drop_scores(std::vector<ActivationTerm> terms) {
  std::erase_if(terms, [](const ActivationTerm& t) { return t.bytes_per_score > 0; });
  return terms;
}

// The terms of one lifetime (ActivationTerm::held_by_graph).
std::vector<ActivationTerm> only(std::vector<ActivationTerm> terms, bool held_by_graph) {
  std::erase_if(terms, [&](const ActivationTerm& t) { return t.held_by_graph != held_by_graph; });
  return terms;
}

// "28 layers x 2,048 tokens x 71,760 B" or, when layers differ, the distinct rows summed.
// Layer i's terms are lists[layer_list[i]] (as LayerActivations keeps them).
std::string layers_formula(const std::vector<std::vector<ActivationTerm>>& lists,
                           const std::vector<std::size_t>& layer_list, const Context& ctx) {
  struct Row {
    std::int64_t tok, score, pair, fixed, count;
  };
  std::vector<Row> rows;
  for (const std::size_t list : layer_list) {
    const std::vector<ActivationTerm>& terms = lists[list];
    const std::int64_t t = terms_per_token(terms);
    const std::int64_t sc = terms_per_score(terms);
    std::int64_t pr = 0;
    std::int64_t fx = 0;
    for (const ActivationTerm& term : terms) {
      pr += term.bytes_per_pair;
      fx += term.bytes_fixed;
    }
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
      return r.tok == t && r.score == sc && r.pair == pr && r.fixed == fx;
    });
    if (it == rows.end()) {
      rows.push_back({t, sc, pr, fx, 1});
    } else {
      ++it->count;
    }
  }
  const std::int64_t tokens = ctx.plan.batch * ctx.plan.seq;
  std::string out;
  for (const Row& r : rows) {
    if (!out.empty()) out += " + ";
    out += fmt::format("{} layers x {} tokens x {} B/token", r.count, with_commas(tokens),
                       with_commas(r.tok));
    if (r.score > 0) {
      out += fmt::format(" + {} layers x {} x {} heads x {}^2 scores x {} B", r.count,
                         ctx.plan.batch, ctx.spec.heads, ctx.plan.seq, r.score);
    }
    if (r.pair > 0) {  // a mask over (batch, seq, seq): the sliding window's or padding's
      out += fmt::format(" + {} layers x {} x {}^2 mask x {} B", r.count, ctx.plan.batch,
                         ctx.plan.seq, r.pair);
    }
    if (r.fixed > 0) {
      out += fmt::format(" + {} layers x {} B per layer (DoRA)", r.count, with_commas(r.fixed));
    }
  }
  return out;
}

// The list of the first layer with the most bytes.
std::size_t largest_layer(const LayerActivations& la, const Context& ctx) {
  std::size_t best = 0;
  std::int64_t best_bytes = -1;
  for (std::size_t k = 0; k < la.term_lists.size(); ++k) {
    const std::int64_t b = terms_bytes(la.term_lists[k], ctx.spec, ctx.plan.batch, ctx.plan.seq);
    if (b > best_bytes) {
      best = k;
      best_bytes = b;
    }
  }
  return best;
}

// A line of tensors held past their nodes' backward (ActivationTerm::held_by_graph), by what
// holds them: the autograd graph (bitsandbytes < 0.43.2 MatMul4Bit's ctx.tensors), or the model
// output's DynamicCache (output_cache).
struct HeldLine {
  std::string_view id;
  std::string_view previous_id;
  bool output_cache;
  const char* label_kept;
  const char* label_to_backward_end;
  const char* previous_label;
};
constexpr HeldLine kHeldByGraph{
    kHeldByGraphId,
    kPreviousHeldByGraphId,
    false,
    "4-bit layer inputs in MatMul4Bit's ctx, held by the graph the loop keeps until the next "
    "forward returns",
    "4-bit layer inputs in MatMul4Bit's ctx, held by the graph to the end of backward",
    "previous step's 4-bit layer inputs, until forward returns"};
constexpr HeldLine kKeptKvCache{
    kKvCacheId,
    kPreviousKvCacheId,
    true,
    "Key and value states in the model output's DynamicCache (use_cache), kept by the loop until "
    "the next forward returns",
    "",
    "previous step's DynamicCache, until forward returns"};

std::vector<ActivationTerm> held_by(const std::vector<ActivationTerm>& terms, const HeldLine& h) {
  std::vector<ActivationTerm> out;
  for (const ActivationTerm& t : terms) {
    if (t.held_by_graph && t.output_cache == h.output_cache) out.push_back(t);
  }
  return out;
}

// Tensors held past their nodes' backward: backward does not release them, the end of what
// holds them does. For the graph that is the end of backward when the loop lets the loss go
// (Trainer.training_step returns loss.detach()), and the next forward when the loop keeps the
// output (FrameworkBehaviour outputs_kept: litgpt's `logits = model(...)`, `loss = ...` are
// rebound only then), so the previous step's are live in it beside this step's; a DynamicCache
// is held only by a kept output (otherwise add_output_cache_until_loss). Under full
// checkpointing the layers' are in the recomputed layer's own graph (reentrant checkpoint, freed
// after its backward) and only the final ones are here.
void add_held(const Context& ctx, Items& items, const HeldLine& h) {
  const LayerActivations& la = ctx.layers;
  if (!la.held_by_graph) return;
  const ModelSpec& s = ctx.spec;
  const TrainingPlan& p = ctx.plan;
  const std::int64_t tokens = p.batch * p.seq;
  const std::vector<ActivationTerm> fin = held_by(la.final_terms, h);
  std::int64_t bytes = terms_bytes(fin, s, p.batch, p.seq);
  std::string formula;
  const char* src = "";  // the held terms' own source (activation_model.cpp), one for the line
  for (const ActivationTerm& t : fin) src = t.source;
  if (p.checkpointing != Checkpointing::full) {
    std::vector<std::vector<ActivationTerm>> held;
    for (const auto& t : la.term_lists) held.push_back(held_by(t, h));
    for (const std::size_t list : la.layer_list) {
      bytes = sat_add(bytes, terms_bytes(held[list], s, p.batch, p.seq));
    }
    for (const auto& list : held) {
      for (const ActivationTerm& t : list) src = t.source;
    }
    formula = layers_formula(held, la.layer_list, ctx);
  }
  const std::int64_t head = terms_per_token(fin);
  if (head > 0) {
    formula += fmt::format("{}{} tokens x {} B/token (lm_head input)", formula.empty() ? "" : " + ",
                           with_commas(tokens), with_commas(head));
  }
  if (bytes <= 0) return;
  const bool kept = p.behaviour.outputs_kept;
  items.push_back({.id = std::string(h.id),
                   .tenant = Tenant::activations,
                   .label = kept ? h.label_kept : h.label_to_backward_end,
                   .bytes = bytes,
                   .formula = formula,
                   .source = src,
                   .live = kept ? from_phase(0, Phase::forward) : forward_to_end_of_backward(),
                   .estimated = true});
  if (kept) {
    items.push_back({.id = std::string(h.previous_id),
                     .tenant = Tenant::activations,
                     .label = h.previous_label,
                     .bytes = bytes,
                     .formula = formula,
                     .source = src,
                     .live = phase_bit(1, Phase::forward),
                     .estimated = true});
  }
}

// A DynamicCache in an output the loop drops (the HF Trainer's compute_loss returns the loss
// only): its key and value states die with the output when the loss returns, before backward.
// Only tensors of their own count (repeat_kv copies what the attention saves); where the
// attention saves the cache's own, the saved line holds them.
void add_output_cache_until_loss(const Context& ctx, Items& items) {
  const LayerActivations& la = ctx.layers;
  if (la.settings.output_cache != OutputCache::until_loss) return;
  const ModelSpec& s = ctx.spec;
  const TrainingPlan& p = ctx.plan;
  std::int64_t bytes = 0;
  std::int64_t layers = 0;
  for (const std::size_t list : la.layer_list) {
    const std::int64_t b =
        terms_bytes(la.term_lists[list], s, p.batch, p.seq, TermLife::until_loss);
    bytes = sat_add(bytes, b);
    layers += b > 0 ? 1 : 0;
  }
  if (bytes <= 0) return;
  items.push_back(
      {.id = std::string(kKvCacheId),
       .tenant = Tenant::activations,
       .label = "Key and value states in the model output's DynamicCache (use_cache), until the "
                "loss returns",
       .bytes = bytes,
       .formula =
           fmt::format("{} layers x {} tokens x {} B/token", layers, with_commas(p.batch * p.seq),
                       with_commas(kv_cache_bytes_per_token(s, la.settings))),
       .source = "transformers cache_utils.py DynamicLayer.update; the Trainer's compute_loss "
                 "drops the output",
       .live = between(0, Phase::forward, Phase::end_of_forward) |
               between(1, Phase::forward, Phase::end_of_forward),
       .estimated = true});
}

}  // namespace

LayerActivations layer_activations(const Context& ctx) {
  const ModelSpec& spec = ctx.spec;
  LayerActivations out;
  out.settings = activation_settings(ctx.plan);
  out.plans = layer_plans(spec, ctx.inventory, ctx.plan);
  out.layer_list.reserve(out.plans.size());
  std::int64_t bytes = 0;
  std::int64_t freed = 0;
  for (std::size_t i = 0; i < out.plans.size(); ++i) {
    const LayerPlan& l = out.plans[i];
    // Alike layers (all of a dense model's, in most plans) share the previous layer's terms:
    // building them was a tenth of a whole `trainmem estimate` process, copying them 1,300
    // strings.
    if (i == 0 || !same_layer_terms(spec, out.plans[i - 1], l)) {
      RoleSet no_grad = 0;
      out.term_lists.push_back(layer_terms(spec, l, out.settings, &no_grad));
      out.no_grad_inputs.push_back(no_grad);
      const std::vector<ActivationTerm>& terms = out.term_lists.back();
      bytes = terms_bytes(terms, spec, ctx.plan.batch, ctx.plan.seq);
      freed = terms_bytes(terms, spec, ctx.plan.batch, ctx.plan.seq, TermLife::freed_in_backward);
      out.held_by_graph = out.held_by_graph || any_held_by_graph(terms);
    }
    out.layer_list.push_back(out.term_lists.size() - 1);
    out.max_layer_bytes = std::max(out.max_layer_bytes, bytes);
    out.max_layer_freed_bytes = std::max(out.max_layer_freed_bytes, freed);
    out.needs_input.push_back(l.input_requires_grad || l.trainable || l.trainable_routed ||
                              l.trainable_shared || l.adapted || l.adapted_experts);
  }
  bool norm_t = false;
  bool head_t = false;
  bool embed_t = false;
  bool head_adapted = false;
  for (const TensorGroup& g : ctx.inventory.groups) {
    head_adapted = head_adapted || (g.role == Role::lm_head && g.adapter != AdapterPart::none &&
                                    g.adapter != AdapterPart::magnitude && !g.mtp);
    if (!g.trainable || g.mtp || g.adapter != AdapterPart::none) continue;
    norm_t = norm_t || g.role == Role::final_norm;
    head_t = head_t || g.role == Role::lm_head;
    embed_t = embed_t || trains_embedding_tensor(g);
  }
  if (spec.tied_embeddings) head_t = head_t || embed_t;
  out.lm_head_trainable = head_t;
  const bool rg = !out.needs_input.empty() && out.needs_input.back();
  out.final_terms = final_terms(spec, rg, norm_t, head_t, out.settings, head_adapted);
  out.held_by_graph = out.held_by_graph || any_held_by_graph(out.final_terms);
  out.any_requires_grad = rg || norm_t || head_t || head_adapted;
  return out;
}

// The attention masks transformers builds once per forward (masking_utils.py
// create_causal_mask, create_sliding_window_causal_mask) are arguments of every checkpointed
// layer call, so under gradient checkpointing they stay referenced until layer 0's backward
// instead of being freed with the forward. Eager attention gets each mask kind as an additive
// tensor of the hidden dtype, (B, 1, L, L); SDPA gets a bool mask only where one is needed, a
// sliding window shorter than the sequence (one (1, 1, L, L) expanded over the batch) or
// padding (B, 1, L, L), and none for plain causal attention (is_causal) unless the model always
// materialises it (Falcon: one (1, 1, L, L) expanded over the batch). Measured on CPU:
// Gemma 2 and gpt-oss eager 2 x B x L^2 x 2 B, Mistral and cohere2 SDPA L^2 x 1 B
// (validation/data/families.jsonl, checkpointing rows).
void add_checkpointed_masks(const Context& ctx, Items& items) {
  const ModelSpec& s = ctx.spec;
  const TrainingPlan& p = ctx.plan;
  const ActivationSettings& cfg = ctx.layers.settings;
  if (!runs_transformers_models(p.framework)) return;
  const bool any_sliding =
      s.sliding_window > 0 &&
      std::any_of(ctx.layers.plans.begin(), ctx.layers.plans.end(),
                  [&](const LayerPlan& l) { return is_sliding_layer(s, l.layer); });
  const bool any_full =
      std::any_of(ctx.layers.plans.begin(), ctx.layers.plans.end(),
                  [&](const LayerPlan& l) { return !is_sliding_layer(s, l.layer); });
  const std::int64_t pairs = p.seq * p.seq;
  const std::int64_t kinds = (any_full ? 1 : 0) + (any_sliding ? 1 : 0);  // full, sliding
  std::int64_t bytes = 0;
  std::string formula;
  const AttentionKernel kernel = attention_kernel(s, cfg);
  if (kernel == AttentionKernel::eager) {
    bytes = kinds * p.batch * pairs * cfg.stream_bytes;
    formula = fmt::format("{} mask kind{} x {} x {}^2 x {} B (additive, eager)", kinds,
                          kinds == 1 ? "" : "s", p.batch, p.seq, cfg.stream_bytes);
  } else if (kernel == AttentionKernel::fused && p.attention == Attention::sdpa) {
    const bool sliding_mask = any_sliding && p.seq > s.sliding_window;
    if (cfg.padding_mask) {
      bytes = kinds * p.batch * pairs;
      formula = fmt::format("{} bool mask{} x {} x {}^2 (padding)", kinds, kinds == 1 ? "" : "s",
                            p.batch, p.seq);
    } else if (sliding_mask) {
      bytes = pairs;
      formula = fmt::format("one bool sliding-window mask, {}^2 (broadcast over the batch)", p.seq);
    } else if (s.sdpa_mask_always) {
      bytes = pairs;
      formula = fmt::format(
          "one bool causal mask, {}^2 (broadcast over the batch; {} always "
          "materialises it)",
          p.seq, s.model_type);
    }
  }
  if (bytes <= 0) return;
  items.push_back({.id = "activations.checkpointed_masks",
                   .tenant = Tenant::activations,
                   .label = "Attention masks held by the checkpointed layers",
                   .bytes = bytes,
                   .formula = formula,
                   .source = "transformers masking_utils.py; modeling_layers.py "
                             "GradientCheckpointingLayer",
                   .live = forward_to_end_of_backward(),
                   .estimated = true});
}

void add_activations(const Context& ctx, Items& items) {
  if (ctx.plan.convention == Convention::textbook) {
    items.push_back(textbook_checkpointed(ctx));
    return;
  }
  const ModelSpec& s = ctx.spec;
  const TrainingPlan& p = ctx.plan;
  const std::int64_t tokens = p.batch * p.seq;
  const LayerActivations& la = ctx.layers;
  const char* model_src = "autograd saved tensors of the HF decoder layer (docs/method.md)";

  if (p.checkpointing == Checkpointing::full) {
    // GradientCheckpointingLayer keeps each layer's input hidden states (transformers
    // modeling_layers.py; torch.utils.checkpoint); a layer nothing upstream or inside trains
    // saves nothing.
    const auto needing = std::count(la.needs_input.begin(), la.needs_input.end(), true);
    // Offloaded checkpoints (torchtune OffloadActivations, unsloth's offloaded checkpointer): each
    // layer input is copied to host memory once the next layer starts; the one being copied and
    // the one in use stay on the device.
    constexpr std::int64_t kOffloadResidentLayers = 2;
    const bool offload = p.behaviour.offload_checkpoints;
    const std::int64_t layers = offload ? std::min<std::int64_t>(needing, kOffloadResidentLayers)
                                        : static_cast<std::int64_t>(needing);
    const std::int64_t each = tokens * s.hidden * la.settings.stream_bytes;
    items.push_back(
        {.id = "activations.checkpoints",
         .tenant = Tenant::activations,
         .label =
             offload ? "Checkpointed layer inputs on the device (the rest offloaded to host memory)"
                     : "Checkpointed layer inputs (hidden states)",
         .bytes = layers * each,
         .formula = fmt::format("{} layers x {} tokens x {} hidden x {} B", layers,
                                with_commas(tokens), s.hidden, la.settings.stream_bytes),
         .source = offload
                       ? "torchtune training/_activation_offloading.py OffloadActivations; unsloth "
                         "models/_utils.py Unsloth_Offloaded_Gradient_Checkpointer"
                       : "transformers modeling_layers.py GradientCheckpointingLayer; "
                         "torch.utils.checkpoint",
         .live = forward_to_backward_start(),
         .estimated = true});
    add_checkpointed_masks(ctx, items);
    items.push_back(
        {.id = "activations.recompute",
         .tenant = Tenant::activations,
         .label = "Recomputed layer during its backward",
         .bytes = la.max_layer_bytes,
         .formula = fmt::format("the largest layer: {}",
                                layers_formula(la.term_lists, {largest_layer(la, ctx)}, ctx)),
         .source = "torch.utils.checkpoint recomputes one layer's forward in backward",
         .live = late_backward(),
         .estimated = true});
  } else {
    // Selective checkpointing recomputes the attention scores, and terms the graph holds have a
    // line of their own (add_held): a copy without them. Otherwise the context's terms
    // as they are (no copy: this runs in every estimate).
    std::vector<std::vector<ActivationTerm>> filtered;
    const bool selective = p.checkpointing == Checkpointing::selective;
    if (selective || la.held_by_graph) {
      for (const auto& t : la.term_lists) {
        filtered.push_back(only(selective ? drop_scores(t) : t, false));
      }
    }
    const std::vector<std::vector<ActivationTerm>>& saved =
        filtered.empty() ? la.term_lists : filtered;
    std::vector<std::int64_t> list_bytes;
    for (const auto& t : saved) list_bytes.push_back(terms_bytes(t, s, p.batch, p.seq));
    std::int64_t total = 0;
    for (const std::size_t list : la.layer_list) total = sat_add(total, list_bytes[list]);
    items.push_back(
        {.id = "activations.saved",
         .tenant = Tenant::activations,
         .label = fmt::format(
             "Saved activations, {} decoder layers{}{}", s.layers,
             p.checkpointing == Checkpointing::selective ? " (attention scores recomputed)" : "",
             s.estimated_from.empty() ? "" : " (estimated: " + s.estimated_from + " layer shape)"),
         .bytes = total,
         .formula = layers_formula(saved, la.layer_list, ctx),
         .source = model_src,
         .live = forward_to_backward_start(),
         .estimated = true});
    items.push_back({.id = "activations.last_layer",
                     .tenant = Tenant::activations,
                     .label = "One layer's saved activations, late in backward",
                     .bytes = la.max_layer_freed_bytes,
                     .formula = "the largest layer's share, still held while its "
                                "backward runs and every gradient exists",
                     .source = model_src,
                     .live = late_backward(),
                     .estimated = true});
  }
  add_held(ctx, items, kHeldByGraph);
  add_held(ctx, items, kKeptKvCache);
  add_output_cache_until_loss(ctx, items);
  const std::vector<ActivationTerm> final_freed = only(la.final_terms, false);
  const std::int64_t fin = terms_bytes(final_freed, s, p.batch, p.seq);
  if (fin > 0) {
    items.push_back({.id = "activations.final_norm_head_input",
                     .tenant = Tenant::activations,
                     .label = "Final norm and lm_head input",
                     .bytes = fin,
                     .formula = fmt::format("{} tokens x {} B/token", with_commas(tokens),
                                            terms_per_token(final_freed)),
                     .source = "transformers modeling_llama.py (norm, lm_head)",
                     .live = forward_to_backward_start(),
                     .estimated = true});
  }
  // Embedding dropout (embd_pdrop and kin): its mask, saved when the embedding output requires
  // grad (trainable embeddings, or PEFT's input-require-grads hook under checkpointing).
  const std::int64_t emb_drop = embedding_dropout_bytes_per_token(s, la.settings);
  if (emb_drop > 0 && !la.plans.empty() && la.plans.front().input_requires_grad) {
    items.push_back({.id = "activations.embedding_dropout",
                     .tenant = Tenant::activations,
                     .label = "Embedding dropout mask",
                     .bytes = tokens * emb_drop,
                     .formula = fmt::format("{} tokens x {} hidden x {} B", with_commas(tokens),
                                            s.hidden, emb_drop / s.hidden),
                     .source = "PyTorch aten native Dropout.cpp (native_dropout bool mask on CUDA)",
                     .live = forward_to_end_of_backward(),
                     .estimated = true});
  }
  // enable_input_require_grads (PEFT, or transformers 5, under checkpointing) calls
  // requires_grad_() on the frozen embedding's output: a leaf, which its AccumulateGrad node keeps
  // until backward ends. Layer 0's input is that tensor unless something comes between: embedding
  // dropout or GPT-2's position add make a new one, and the leaf is then kept beside it
  // (measured: validation/data/holdout-3.jsonl, StarCoder2 and GPT-2 LoRA + checkpointing).
  const bool input_embedding_trains =
      std::any_of(ctx.inventory.groups.begin(), ctx.inventory.groups.end(),
                  [](const TensorGroup& g) { return g.role == Role::embedding && g.trainable; });
  if (input_require_grads_hooked(p) && !input_embedding_trains &&
      (emb_drop > 0 || s.learned_positions)) {
    items.push_back({.id = "activations.embedding_leaf",
                     .tenant = Tenant::activations,
                     .label = "Embedding output, a leaf that requires grad (kept by its graph)",
                     .bytes = tokens * s.hidden * la.settings.stream_bytes,
                     .formula = fmt::format("{} tokens x {} hidden x {} B", with_commas(tokens),
                                            s.hidden, la.settings.stream_bytes),
                     .source = "transformers modeling_utils.py enable_input_require_grads; "
                               "torch/csrc/autograd/functions/accumulate_grad.h (holds the leaf)",
                     .live = forward_to_end_of_backward(),
                     .estimated = false});
  }
  // input_ids (saved by the embedding) and labels, int64; rotary cos/sin for positions (1, s),
  // shared by every layer (LlamaRotaryEmbedding, dtype of the hidden states); partial rotary
  // (Phi, GPT-NeoX) rotates rotary_dim of each head.
  const std::int64_t ids = 16 * tokens;
  const std::int64_t rot_dim = s.rotary_dim > 0 ? s.rotary_dim : qk_head_dim(s);
  const std::int64_t rotary =
      s.learned_positions ? 0 : 2 * p.seq * rot_dim * la.settings.stream_bytes;
  items.push_back(
      {.id = "activations.inputs_rope",
       .tenant = Tenant::activations,
       .label = "Batch tensors and rotary cos/sin",
       .bytes = ids + rotary,
       .formula = rotary > 0
                      ? fmt::format("{} tokens x 2 x 8 B (input_ids, labels) + 2 x {} seq "
                                    "x {} x {} B (rotary cos/sin)",
                                    with_commas(tokens), p.seq, rot_dim, la.settings.stream_bytes)
                      : fmt::format("{} tokens x 2 x 8 B (input_ids, labels)", with_commas(tokens)),
       .source = rotary > 0 ? "transformers Trainer batch; LlamaRotaryEmbedding"
                            : "transformers Trainer batch (learned positions: no rotary tables)",
       .live = forward_to_end_of_backward(),
       .estimated = false});
}

}  // namespace trainmem::ledger

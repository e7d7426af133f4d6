// The allocation event stream (alloc_events.h). Order within a step, from PyTorch:
//  loaded         weights per tensor as from_pretrained materialises them, then the fp32 master
//                 copies (mixed-precision wrappers copy at initialisation); in the first step,
//                 the QLoRA load transient after them (ledger/run_phases.h); in the steady state,
//                 the validation pass or generation between steps;
//  forward        lines that start here (batch, workspaces, autocast copies), then each decoder
//                 layer's saved tensors in forward order (autograd saves as ops run), then the
//                 final norm / lm_head input and the logits chain (lm_head runs last);
//  backward_start the loss gradients (the engine starts from the loss);
//  backward       head gradients first; then layer by layer in reverse (the autograd engine walks
//                 the graph from the loss): a layer's backward transient, its parameters'
//                 gradients (AccumulateGrad, torch/csrc/autograd/functions/accumulate_grad.h),
//                 then its saved tensors are released as its nodes finish; the embedding last;
//  optimizer_step state created lazily on the first step (torch/optim/adamw.py _init_group:
//                 zeros_like per parameter), the foreach step's intermediate list
//                 (_multi_tensor_adamw: torch._foreach_sqrt of exp_avg_sq), freed at the end;
//                 then zero_grad(set_to_none=True) frees the gradients.
// Lines the splitting does not cover are allocated where their phase mask turns on and freed
// where it turns off. Each split is taken only when its tensors sum exactly to the ledger's line.
#include "gpu/alloc_events.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "ledger/context.h"
#include "ledger/format.h"
#include "ledger/overhead.h"
#include "ledger/phases.h"
#include "ledger/run_phases.h"
#include "model/dtype.h"
#include "model/inventory.h"
#include "plan/method.h"
#include "plan/optimizer.h"
#include "plan/precision.h"
#include "plan/quantisation.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"

namespace trainmem::gpu {
namespace {

// A run of identical tensors: `count` of `bytes` each, at `layer` (-1: outside the layers).
struct Piece {
  std::int64_t bytes = 0;
  std::int32_t count = 1;
  std::int64_t layer = -1;
  bool after_layers = false;  // outside the layers, after them in forward (norm, head)
};

std::int64_t total(const std::vector<Piece>& ps) {
  std::int64_t t = 0;
  for (const Piece& p : ps) t += p.bytes * p.count;
  return t;
}

bool after_layers(Role r) {
  return r != Role::embedding && r != Role::position_embedding;
}

// One group's tensors, per layer when the multiplicity divides evenly over its layers.
void add_group(std::vector<Piece>& out, const TensorGroup& g, std::int64_t bytes_each) {
  if (bytes_each <= 0) return;
  const std::int64_t layers = g.layer_first >= 0 ? g.layer_last - g.layer_first + 1 : 0;
  if (layers > 0 && g.multiplicity % layers == 0) {
    for (std::int64_t l = g.layer_first; l <= g.layer_last; ++l) {
      out.push_back({bytes_each, static_cast<std::int32_t>(g.multiplicity / layers), l, false});
    }
    return;
  }
  out.push_back({bytes_each, static_cast<std::int32_t>(g.multiplicity), g.layer_first,
                 g.layer_first < 0 && after_layers(g.role)});
}

// model.parameters() order: the embedding, then layer by layer, then the final norm and head;
// within each, the order the pieces came in. A stable counting sort on that position (layer is
// -1 outside the layers, inventory.h): linear in the few hundred pieces, where a comparison sort
// cost as much as building the rest of the stream.
void parameter_order(std::vector<Piece>& pieces) {
  std::int64_t layers = 0;
  for (const Piece& q : pieces) layers = std::max(layers, q.layer + 1);
  auto position = [&](const Piece& q) {
    const std::int64_t at = q.layer >= 0 ? 1 + q.layer : (q.after_layers ? 1 + layers : 0);
    return static_cast<std::size_t>(at);
  };
  std::vector<std::size_t> start(static_cast<std::size_t>(layers) + 3, 0);
  for (const Piece& q : pieces) ++start[position(q) + 1];
  for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  std::vector<Piece> sorted(pieces.size());
  for (const Piece& q : pieces) sorted[start[position(q)]++] = q;
  pieces = std::move(sorted);
}

bool live(PhaseMask m, int slot) {
  return slot >= 0 && slot < kPhaseSlots && (m & (PhaseMask{1} << slot)) != 0;
}
bool run_starts(PhaseMask m, int slot) {
  return live(m, slot) && !live(m, slot - 1);
}
bool run_ends(PhaseMask m, int slot) {
  return live(m, slot) && !live(m, slot + 1);
}
// How many times a line with this mask is allocated: once per run of slots.
std::size_t run_count(PhaseMask m) {
  std::size_t n = 0;
  for (int slot = 0; slot < kPhaseSlots; ++slot) n += run_starts(m, slot) ? 1 : 0;
  return n;
}
Phase phase_of(int slot) {
  return static_cast<Phase>(slot % kPhaseCount);
}

class Builder {
 public:
  EventStream out;

  std::int16_t label(const std::string& text, Tenant t) {
    auto it = index_.find(text);
    if (it != index_.end()) return it->second;
    // One label per ledger line or split (a few dozen); AllocEvent keeps it in 16 bits.
    if (out.labels.size() >= static_cast<std::size_t>(INT16_MAX)) return -1;
    out.labels.push_back(text);
    out.label_tenant.push_back(t);
    const auto i = static_cast<std::int16_t>(out.labels.size() - 1);
    index_.emplace(text, i);
    return i;
  }
  std::int32_t alloc(std::int64_t bytes, std::int32_t count, int slot, std::int16_t lab) {
    if (bytes <= 0 || count <= 0) return -1;
    out.events.push_back(
        {Op::alloc, 0, static_cast<std::int16_t>(slot), lab, next_id_, count, bytes});
    return next_id_++;
  }
  void free(std::int32_t id, int slot) {
    if (id < 0) return;
    out.events.push_back({Op::free, 0, static_cast<std::int16_t>(slot), -1, id, 1, 0});
  }

 private:
  std::map<std::string, std::int16_t> index_;
  std::int32_t next_id_ = 0;
};

// A ledger line split into pieces, with the slots it is live in.
struct Split {
  std::vector<Piece> pieces;
  PhaseMask live = 0;
  std::int16_t label = -1;
  std::vector<std::int32_t> ids;  // live ids of the current run
};

struct Plan {
  Split weights, master, grads, states, scratch;
  // Activations: per layer, the saved tensors (bytes) and a checkpointed input (0 when none).
  bool layered = false;
  bool checkpointed = false;
  std::vector<std::vector<std::int64_t>> layer_terms;
  std::vector<std::int64_t> layer_input;
  PhaseMask saved_live = 0;
  std::int16_t act_label = -1;
  std::int16_t input_label = -1;
  std::vector<std::int64_t> transient;  // per layer, when the backward transient is split
  std::int16_t transient_label = -1;
  // Tensors the graph holds (ActivationTerm::held_by_graph): per layer, then after the layers;
  // allocated with the layer's saved tensors, freed where the held line's mask ends.
  std::vector<std::vector<std::int64_t>> layer_held;
  std::vector<std::int64_t> final_held;
  PhaseMask held_live = 0;
  std::int16_t held_label = -1;
  std::vector<std::int32_t> held_ids;
  // A kept held line's previous-step copy (ledger::previous_step_copy_of): where it is live the
  // step's held tensors are allocated anew, and the older ones are freed where it ends.
  PhaseMask held_previous_live = 0;
  std::vector<std::int32_t> held_old;
  // Autocast's bf16 weight copies (ledger::autocast_copies), per tensor: a layer's are made as its
  // matmuls run in forward and freed with its saved tensors in backward (the matmul saves the
  // copy); the head's before the logits, freed when backward starts its walk of the layers.
  Split casts;
  std::vector<std::vector<std::int32_t>> cast_ids;  // per layer
  std::vector<std::int32_t> head_cast_ids;
  // A tied embedding's gradient (temporaries.tied_embedding_grad holds two of its size): lm_head's
  // arrives first and waits in the engine's input buffer, so it is made with the head's
  // gradients; at the end of backward the embedding's dense gradient and the sum are made, the
  // two addends freed, and the sum is the `.grad` kept (input_buffer.cpp accumulate).
  std::int64_t tied_bytes = 0;
  std::int32_t tied_held = -1;  // the held gradient's id in grads.ids, this step
};

// Claims the items of `tenant` (optionally only those whose mask is `mask`) when their bytes sum
// to `want`; returns their common mask, or 0 when they do not match. `nested`: the masks may
// differ when each lies within the first's (the embedding's gradients, made after the layers'
// backward, which the split's order places last), and the first's is returned.
PhaseMask claim(const Ledger& l, std::vector<bool>& claimed, Tenant tenant, std::int64_t want,
                std::optional<PhaseMask> mask = std::nullopt, bool nested = false) {
  std::int64_t sum = 0;
  PhaseMask common = 0;
  std::vector<std::size_t> picks;
  for (std::size_t k = 0; k < l.items.size(); ++k) {
    const LedgerItem& i = l.items[k];
    if (claimed[k] || i.tenant != tenant || (mask && i.live != *mask)) continue;
    if (!picks.empty() && i.live != common) {
      if (!nested || (i.live & ~common) != 0) return 0;
      sum += i.bytes;
      picks.push_back(k);
      continue;
    }
    common = i.live;
    sum += i.bytes;
    picks.push_back(k);
  }
  if (picks.empty() || sum != want || want == 0) return 0;
  for (std::size_t k : picks) claimed[k] = true;
  return common;
}

std::int64_t claim_one(const Ledger& l, std::vector<bool>& claimed, Tenant tenant,
                       std::int64_t bytes, PhaseMask mask) {
  for (std::size_t k = 0; k < l.items.size(); ++k) {
    const LedgerItem& i = l.items[k];
    if (!claimed[k] && i.tenant == tenant && i.live == mask && i.bytes == bytes) {
      claimed[k] = true;
      return 1;
    }
  }
  return 0;
}

// A rank of a sharded layout (ZeRO-2/3's partition, FSDP's sharded gradients; the layout's
// "gradients on this rank" and "Sharded gradients" lines) holds its share of each parameter's
// gradient, which appears when that unit's reduce-scatter ends, in backward's layer order, as a
// single GPU's gradients appear tensor by tensor. Allocated whole at the start of backward, the
// line stood beside every saved activation: Llama-3.1-8B on 8 GPUs under FULL_SHARD replayed
// 3 GiB over the ledger's peak. The rank's line is split as the full gradients are, each piece
// scaled by the rank's share (floored; the remainder goes with the head's pieces, first).
void shard_gradient_split(const Ledger& l, std::vector<bool>& claimed,
                          const std::vector<Piece>& full, const std::vector<Piece>& weights,
                          Split& split, Builder& b) {
  // A rank's share is at most the whole, in fp32 where the full gradients are 16-bit (FSDP's
  // sharded fp32 gradients on one rank): twice their bytes. A larger line covers frozen
  // parameters too (FSDP1's flat gradient of a unit that trains, kept unsharded under no_sync):
  // it is laid over the layers' weights instead, which is where those units' gradients appear.
  constexpr std::int64_t kFp32Over16Bit = 2;
  const std::int64_t whole = total(full);
  if (whole <= 0) return;
  std::vector<Piece> layer_weights;
  for (const Piece& pc : weights) {
    if (pc.layer >= 0) layer_weights.push_back(pc);
  }
  for (std::size_t k = 0; k < l.items.size(); ++k) {
    const LedgerItem& i = l.items[k];
    if (claimed[k] || i.tenant != Tenant::gradients ||
        (i.id != "gradients.all" && i.id != "gradients.sharded_gradients_f32") || i.bytes <= 0) {
      continue;
    }
    const bool covers_frozen = i.bytes > whole * kFp32Over16Bit;
    if (covers_frozen && total(layer_weights) <= 0) continue;
    const std::int64_t base = covers_frozen ? total(layer_weights) : whole;
    std::vector<Piece> pieces = covers_frozen ? layer_weights : full;
    const double share = static_cast<double>(i.bytes) / static_cast<double>(base);
    for (Piece& pc : pieces) {
      pc.bytes = static_cast<std::int64_t>(static_cast<double>(pc.bytes) * share);
    }
    std::erase_if(pieces, [](const Piece& pc) { return pc.bytes <= 0; });
    const std::int64_t rest = i.bytes - total(pieces);
    if (rest < 0) return;
    if (rest > 0) pieces.push_back({rest, 1, -1, true});
    parameter_order(pieces);
    claimed[k] = true;
    split.pieces = std::move(pieces);
    split.live = i.live;
    split.label = b.label("gradients, this rank's shard (per tensor)", Tenant::gradients);
    ++b.out.items_split;
    return;
  }
}

// Per-tensor pieces of the parameter tenants, from the inventory as the plan leaves it.
void parameter_splits(const ledger::Context& ctx, const Ledger& l, std::vector<bool>& claimed,
                      Plan& p, Builder& b) {
  const PrecisionRecipe& r = recipe(ctx.plan.precision);
  const OptimizerRow& row = optimizer_row(ctx.plan.optimizer);
  std::vector<Piece> w, m, g, s, sc;
  for (const TensorGroup& t : ctx.inventory.groups) {
    if (t.mtp) continue;
    const std::int64_t n = tensor_elements(t);
    add_group(w, t,
              t.quantised ? quantised_bytes(ctx.plan.quant, t.shape) : dense_bytes(t.dtype, n));
    if (!t.trainable) continue;
    if (r.master && dtype_info(t.dtype).bits < dtype_info(*r.master).bits) {
      add_group(m, t, dense_bytes(*r.master, n));
    }
    const Dtype gd =
        dtype_info(t.dtype).bits > dtype_info(r.gradients).bits ? t.dtype : r.gradients;
    add_group(g, t, dense_bytes(gd, n));
    const Dtype sd = dtype_info(t.dtype).bits > dtype_info(r.states).bits ? t.dtype : r.states;
    // A paged row's buffers of large tensors live outside the pool; the rest is allocated in it.
    const TensorUse use = tensor_use(t, ctx.spec, ctx.plan.behaviour.bnb_embeddings_32bit);
    const std::int64_t state =
        optimizer_state_bytes(row, t.shape, sd, use) - paged_state_bytes(row, t.shape, use);
    // zeros_like per state: Adam's exp_avg and exp_avg_sq are separate tensors.
    const bool plain = row.storage == StateStorage::param_dtype && !row.factored_second_moment &&
                       !row.blockwise_second_moment && !row.muon_split && row.full_states > 0 &&
                       state % row.full_states == 0;
    if (plain) {
      const std::size_t before = s.size();
      add_group(s, t, state / row.full_states);
      for (std::size_t k = before; k < s.size(); ++k) s[k].count *= row.full_states;
    } else {
      add_group(s, t, state);
    }
    add_group(sc, t, dense_bytes(sd, n));  // _foreach_sqrt(exp_avg_sq): v's dtype
  }
  auto take = [&](Split& split, std::vector<Piece> pieces, Tenant tenant, const std::string& lab) {
    // The gradient lines' masks nest (gradients.cpp: the embedding's are made last, as the
    // split's parameter order allocates them).
    const PhaseMask mask =
        claim(l, claimed, tenant, total(pieces), std::nullopt, tenant == Tenant::gradients);
    if (mask == 0) return;
    parameter_order(pieces);
    split.pieces = std::move(pieces);
    split.live = mask;
    split.label = b.label(lab, tenant);
    ++b.out.items_split;
  };
  const std::vector<Piece> all_weights = w;  // every tensor, for a rank's gradient line below
  take(p.weights, std::move(w), Tenant::weights, "weights (one per parameter tensor)");
  take(p.master, std::move(m), Tenant::master_weights, "master weights, fp32 (per tensor)");
  const std::vector<Piece> full_grads = g;
  take(p.grads, std::move(g), Tenant::gradients, "gradients (AccumulateGrad, per tensor)");
  if (p.grads.pieces.empty()) {
    shard_gradient_split(l, claimed, full_grads, all_weights, p.grads, b);
  }
  if (row.paged) {
    // bitsandbytes paged optimizers keep the state of large tensors in cudaMallocManaged memory,
    // outside the pool (the textbook convention's uniform line counts all of it there).
    for (std::size_t k = 0; k < l.items.size(); ++k) {
      const std::string& id = l.items[k].id;
      if (l.items[k].tenant == Tenant::optimizer_states && !claimed[k] &&
          (id == "optimizer_states.paged" || id == "optimizer_states.textbook")) {
        claimed[k] = true;
        b.out.outside_pool_bytes += l.items[k].bytes;
        for (int slot = 0; slot < kPhaseSlots; ++slot) {
          if (live(l.items[k].live, slot)) {
            b.out.outside_pool_from_slot = slot;
            break;
          }
        }
      }
    }
  }
  std::erase_if(s, [](const Piece& piece) { return piece.bytes == 0; });
  take(p.states, std::move(s), Tenant::optimizer_states,
       "optimizer state (zeros_like, per tensor)");
  // The foreach step's intermediate list: one state-sized tensor per parameter.
  if (row.kind == OptimizerKind::adamw && ctx.plan.optimizer_impl == OptimizerImpl::foreach) {
    const std::int64_t want = total(sc);
    for (std::size_t k = 0; k < l.items.size(); ++k) {
      const LedgerItem& i = l.items[k];
      if (!claimed[k] && i.tenant == Tenant::temporaries && i.bytes == want &&
          i.live == ledger::in_phase(Phase::optimizer_step)) {
        claimed[k] = true;
        parameter_order(sc);
        p.scratch.pieces = std::move(sc);
        p.scratch.live = i.live;
        p.scratch.label = b.label("optimizer step: _foreach_sqrt(exp_avg_sq) list", i.tenant);
        ++b.out.items_split;
        break;
      }
    }
  }
}

// One saved tensor's bytes. terms_bytes() (activation_model.h) is the formula's one home and
// prices a list; the term is copied into a one-element list kept across calls, so pricing a term
// copies its name's characters instead of allocating a list and a string for each of the
// hundreds of terms.
class TermBytes {
 public:
  TermBytes(const ModelSpec& spec, const TrainingPlan& plan) : spec_(spec), plan_(plan) {}
  std::int64_t operator()(const ActivationTerm& t) {
    one_[0] = t;
    return terms_bytes(one_, spec_, plan_.batch, plan_.seq);
  }

 private:
  const ModelSpec& spec_;
  const TrainingPlan& plan_;
  std::vector<ActivationTerm> one_ = std::vector<ActivationTerm>(1);
};

// Saved activations per layer and per term (activations.cpp's lines, split).
void activation_splits(const ledger::Context& ctx, const Ledger& l, std::vector<bool>& claimed,
                       Plan& p, Builder& b) {
  const ModelSpec& spec = ctx.spec;
  const TrainingPlan& plan = ctx.plan;
  const ledger::LayerActivations& la = ctx.layers;
  const std::size_t n = la.layer_count();
  const PhaseMask saved = ledger::forward_to_backward_start();
  const PhaseMask late = ledger::late_backward();
  p.layer_terms.assign(n, {});
  p.layer_input.assign(n, 0);
  std::int64_t sum = 0;
  std::int64_t largest = 0;
  // Each saved tensor's bytes, per list of terms (alike layers share one).
  TermBytes term_bytes(spec, plan);
  const bool full = plan.checkpointing == Checkpointing::full;
  std::vector<std::vector<std::int64_t>> list_terms(la.term_lists.size());
  std::vector<std::vector<std::int64_t>> list_held(la.term_lists.size());
  for (std::size_t k = 0; k < la.term_lists.size(); ++k) {
    for (const ActivationTerm& t : la.term_lists[k]) {
      if (plan.checkpointing == Checkpointing::selective && t.bytes_per_score > 0) continue;
      // A recomputed layer's graph is its own (reentrant checkpoint): held terms go with it.
      (t.held_by_graph && !full ? list_held[k] : list_terms[k]).push_back(term_bytes(t));
    }
  }
  const std::int64_t each = plan.batch * plan.seq * spec.hidden * la.settings.stream_bytes;
  for (std::size_t i = 0; i < n; ++i) {
    p.layer_terms[i] = list_terms[la.layer_list[i]];
    if (full) {
      if (la.needs_input[i]) {
        p.layer_input[i] = each;
        sum += each;
      }
    } else {
      for (const std::int64_t bytes : p.layer_terms[i]) sum += bytes;
    }
  }
  largest = full ? la.max_layer_bytes : la.max_layer_freed_bytes;
  // The aggregate (saved through backward_start) and the late-backward line must both be there.
  std::vector<bool> trial = claimed;
  if (claim_one(l, trial, Tenant::activations, sum, saved) == 0) return;
  if (claim_one(l, trial, Tenant::activations, largest, late) == 0) return;
  if (la.held_by_graph) {
    // The held line (activations.cpp add_held_by_graph), split per layer when its bytes match.
    std::vector<std::vector<std::int64_t>> held(n);
    std::int64_t held_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      held[i] = list_held[la.layer_list[i]];
      for (const std::int64_t bytes : held[i]) held_sum += bytes;
    }
    std::vector<std::int64_t> fin;
    for (const ActivationTerm& t : la.final_terms) {
      if (t.held_by_graph) fin.push_back(term_bytes(t));
    }
    for (const std::int64_t bytes : fin) held_sum += bytes;
    // The held lines (the graph's, a kept output's DynamicCache) share one mask: they are held
    // by what the loop keeps. Otherwise they stay whole (one allocation per run of a mask).
    std::vector<std::size_t> lines;
    std::int64_t lines_sum = 0;
    for (std::size_t k = 0; k < l.items.size(); ++k) {
      const LedgerItem& i = l.items[k];
      if (!ledger::is_held_line(i.id) || trial[k]) continue;
      // A cache the loop drops dies with the loss: a whole line of its own.
      if (i.id == ledger::kKvCacheId && la.settings.output_cache != OutputCache::kept) continue;
      lines_sum += i.bytes;
      lines.push_back(k);
    }
    const bool one_mask = std::all_of(lines.begin(), lines.end(), [&](std::size_t k) {
      return l.items[k].live == l.items[lines.front()].live;
    });
    if (!lines.empty() && one_mask && lines_sum == held_sum) {
      for (const std::size_t k : lines) trial[k] = true;
      const LedgerItem& first = l.items[lines.front()];
      p.layer_held = std::move(held);
      p.final_held = std::move(fin);
      p.held_live = first.live;
      p.held_label = b.label(lines.size() == 1 ? first.label
                                               : "tensors held until the next forward returns "
                                                 "(4-bit layer inputs, DynamicCache)",
                             Tenant::activations);
      b.out.items_split += static_cast<int>(lines.size());
    }
  }
  claimed = trial;
  p.layered = true;
  p.checkpointed = plan.checkpointing == Checkpointing::full;
  p.saved_live = saved;
  p.act_label = b.label(p.checkpointed ? "recomputed layer's saved tensors"
                                       : "saved activations (per layer, per tensor)",
                        Tenant::activations);
  p.input_label = b.label("checkpointed layer input", Tenant::activations);
  b.out.items_split += 2;
  // The backward transient, per layer instead of the largest once.
  if (!la.any_requires_grad) return;
  std::vector<std::int64_t> tr(static_cast<std::size_t>(spec.layers));
  std::int64_t tmax = 0;
  for (std::int64_t i = 0; i < spec.layers; ++i) {
    tr[static_cast<std::size_t>(i)] =
        layer_backward_transient_bytes(spec, i, la.settings, plan.batch, plan.seq);
    tmax = std::max(tmax, tr[static_cast<std::size_t>(i)]);
  }
  if (tr.size() == n && claim_one(l, claimed, Tenant::temporaries, tmax, late) != 0) {
    p.transient = std::move(tr);
    p.transient_label = b.label("backward transient of one layer", Tenant::temporaries);
    ++b.out.items_split;
  }
}

// Autocast's weight copies (the ledger's temporaries.autocast_weight_copies), per tensor in
// parameter order; a frozen head cast once per further piece adds that many head-sized copies.
// Taken when the tensors sum to the line. The embedding's copy, cast where the tied head runs,
// is made with the head's.
void autocast_split(const ledger::Context& ctx, const Ledger& l, std::vector<bool>& claimed,
                    Plan& p, Builder& b) {
  const ledger::AutocastCopies c = ledger::autocast_copies(ctx);
  if (c.params == 0) return;
  std::vector<Piece> pieces;
  for (const TensorGroup& g : c.groups) add_group(pieces, g, 2 * tensor_elements(g));
  for (Piece& pc : pieces) {
    // The forward's layer loop makes the layers' copies: a piece beyond them stays whole.
    if (pc.layer >= static_cast<std::int64_t>(p.layer_terms.size())) return;
    pc.after_layers = pc.after_layers || pc.layer < 0;
  }
  if (c.further_head_pieces > 0) {
    pieces.push_back(
        {2 * c.frozen_head_params, static_cast<std::int32_t>(c.further_head_pieces), -1, true});
  }
  for (std::size_t k = 0; k < l.items.size(); ++k) {
    const LedgerItem& i = l.items[k];
    if (claimed[k] || i.id != ledger::kAutocastCopiesId || i.bytes != total(pieces)) {
      continue;
    }
    claimed[k] = true;
    parameter_order(pieces);
    p.casts.pieces = std::move(pieces);
    p.casts.live = i.live;
    p.casts.label = b.label("autocast bf16 weight copy (per tensor)", i.tenant);
    p.cast_ids.assign(p.layer_terms.size(), {});
    ++b.out.items_split;
    return;
  }
}

// The tied embedding's accumulation replayed as it happens (Plan::tied_bytes), when the gradient
// split's only piece before the layers is that embedding's, one tensor of the line's half.
void tied_embedding_plan(const Ledger& l, Plan& p) {
  std::int64_t line = 0;
  for (const LedgerItem& i : l.items) {
    if (i.id == ledger::kTiedEmbeddingGradId) line = i.bytes;
  }
  const Piece* before = nullptr;
  for (const Piece& pc : p.grads.pieces) {
    if (pc.layer >= 0 || pc.after_layers) continue;
    if (before != nullptr) return;
    before = &pc;
  }
  if (line > 0 && before != nullptr && before->count == 1 &&
      ledger::kTiedAccumulationTensors * before->bytes == line) {
    p.tied_bytes = before->bytes;
  }
}

// Equal tensors a whole line is made of: the loss's backward line `logits.loss_grads` (logits.cpp)
// is two under the eager loss (the gradient nll_loss returns and the one log_softmax's backward
// makes, per piece) and one under the compiled loss (the fused kernel writes the logits' gradient;
// FrameworkBehaviour compiled_loss); a tied embedding's accumulation is two (its dense gradient
// and the sum, temporaries.cpp). 1 for any other line.
std::int32_t line_tensors(const LedgerItem& i, const TrainingPlan& plan) {
  if (i.id == "logits.loss_grads" && !plan.behaviour.compiled_loss) return 2;
  return i.id == ledger::kTiedEmbeddingGradId ? ledger::kTiedAccumulationTensors : 1;
}

// Pieces at `layer` (or outside the layers, before / after them) of a split, their ids into
// `ids` (the split's own list by default).
void alloc_pieces(Builder& b, Split& s, int slot, std::int64_t layer, bool after,
                  std::vector<std::int32_t>* ids = nullptr) {
  std::vector<std::int32_t>& out = ids ? *ids : s.ids;
  // Pieces are in parameter order (parameter_order), so one layer's are contiguous.
  auto key = [](const Piece& q) {
    return std::pair{q.layer >= 0 ? 1 : (q.after_layers ? 2 : 0),
                     std::max<std::int64_t>(q.layer, 0)};
  };
  const std::pair want{layer >= 0 ? 1 : (after ? 2 : 0), std::max<std::int64_t>(layer, 0)};
  out.reserve(out.size() + s.pieces.size());
  auto it = std::lower_bound(s.pieces.begin(), s.pieces.end(), want,
                             [&](const Piece& q, const auto& w) { return key(q) < w; });
  for (; it != s.pieces.end() && key(*it) == want; ++it) {
    out.push_back(b.alloc(it->bytes, it->count, slot, s.label));
  }
}

void alloc_all(Builder& b, Split& s, int slot) {
  s.ids.reserve(s.pieces.size());
  for (const Piece& pc : s.pieces) s.ids.push_back(b.alloc(pc.bytes, pc.count, slot, s.label));
}

void free_all(Builder& b, Split& s, int slot) {
  for (std::int32_t id : s.ids) b.free(id, slot);
  s.ids.clear();
}

// The QLoRA load transient (ledger/run_phases.h): each quantised base weight in parameter order,
// its transients allocated and then freed before the next (lightning's _Linear4bit.quantize and
// torchao's to_nf4 run per tensor), so the allocator sees every size; the largest tensor's set is
// the ledger's line.
void load_sequence(const ledger::Context& ctx, Builder& b, int slot) {
  std::vector<Piece> tensors;  // bytes = elements here
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (g.quantised && !g.mtp) add_group(tensors, g, tensor_elements(g));
  }
  parameter_order(tensors);
  const std::int16_t lab =
      b.label("load: one base weight quantised (bf16 copies, NF4 distances)", Tenant::temporaries);
  for (const Piece& pc : tensors) {
    const ledger::LoadTransient t =
        ledger::load_transient(ctx.plan.behaviour.load_quantiser, pc.bytes);
    for (std::int32_t k = 0; k < pc.count; ++k) {
      const std::array<std::int32_t, 4> ids = {
          b.alloc(t.weight_bytes, 1, slot, lab), b.alloc(t.copy_bytes, 1, slot, lab),
          b.alloc(t.indices_bytes, 1, slot, lab),
          // (value - nf4) and its abs(), or the two nibble tensors: two equal tensors.
          t.distance_bytes % 2 == 0 ? b.alloc(t.distance_bytes / 2, 2, slot, lab)
                                    : b.alloc(t.distance_bytes, 1, slot, lab)};
      for (std::int32_t id : ids) b.free(id, slot);
    }
  }
}

}  // namespace

EventStream alloc_events(const LoadedModel& model, const TrainingPlan& plan, const Ledger& ledger,
                         const StreamOptions& options) {
  const bool close_steady_step = options.close_steady_step;
  Builder b;
  // A run that ends at `slot` is freed there, except at the stream's last slot, where it is freed
  // only when closing the steady step and the same line does not cross from the first step into
  // the steady one.
  auto ends_here = [&](PhaseMask m, int slot) {
    if (!run_ends(m, slot)) return false;
    if (slot + 1 < kPhaseSlots) return true;
    return close_steady_step && !(live(m, kPhaseCount - 1) && live(m, kPhaseCount));
  };
  if (plan.convention == Convention::textbook || plan.params_override > 0) return b.out;
  const ledger::Context ctx = ledger::make_context(model, plan);
  std::vector<bool> claimed(ledger.items.size(), false);
  Plan p;
  parameter_splits(ctx, ledger, claimed, p, b);
  activation_splits(ctx, ledger, claimed, p, b);
  if (p.layered) autocast_split(ctx, ledger, claimed, p, b);
  tied_embedding_plan(ledger, p);

  // Every other line: one allocation per run of its mask.
  struct Whole {
    const LedgerItem* item;
    std::int16_t label;
    std::int32_t count = 1;  // equal tensors the line is made of
    std::int64_t bytes = 0;  // each
    std::int32_t id = -1;
    // A previous-step copy (ledger::previous_step_copy_of) of the whole line `kept`, or of the
    // held split (held_previous): see below.
    std::int32_t kept = -1;
    bool held_previous = false;
  };
  std::vector<Whole> whole;
  PhaseMask load_live = 0;
  for (std::size_t k = 0; k < ledger.items.size(); ++k) {
    if (claimed[k]) continue;
    const LedgerItem& i = ledger.items[k];
    if (is_load_transient(i)) {
      load_live |= i.live;  // replayed tensor by tensor (load_sequence)
      continue;
    }
    if (i.id == "overhead.cublas_workspaces") {
      // One workspace per handle, the device's size when given (ledger/overhead.h).
      const auto handles = static_cast<std::int32_t>(ledger::kCublasHandlesInTraining);
      const std::int64_t each =
          options.cublas_workspace_bytes > 0 ? options.cublas_workspace_bytes : i.bytes / handles;
      whole.push_back({&i, b.label(i.label, i.tenant), handles, each});
      continue;
    }
    const std::int32_t n = line_tensors(i, plan);
    whole.push_back({&i, b.label(i.label, i.tenant), n, i.bytes / n});
  }
  // A loop that keeps a line's tensors into the next forward (the logits, the graph's held
  // inputs) frees the older ones when that forward returns and keeps the new ones: the ledger
  // prices that as the line plus its previous-step copy, and the stream makes the next step's
  // tensors of the line where they are made and frees the older ones where the copy ends, so the
  // allocator sees the holes the real loop leaves, and a run chains each step's at its own length
  // (run_events.cpp hands them over like the gradients a late zero_grad frees).
  for (Whole& w : whole) {
    const std::string_view of = ledger::previous_step_copy_of(w.item->id);
    if (of.empty()) continue;
    if (p.held_live != 0 && ledger::is_held_line(of)) {
      w.held_previous = true;
      p.held_previous_live = w.item->live;
      continue;
    }
    for (std::size_t k = 0; k < whole.size(); ++k) {
      const Whole& c = whole[k];
      if (c.item->id == of && c.bytes == w.bytes && c.count == w.count) {
        w.kept = static_cast<std::int32_t>(k);
      }
    }
  }
  auto start = [&](Whole& w, int slot) {
    if (w.held_previous) return;  // the layers' held tensors are made in the layer loop
    // Replayed with this step's gradients (tied_embedding_plan), below.
    if (w.item->id == ledger::kTiedEmbeddingGradId && p.tied_held >= 0) return;
    if (w.kept >= 0 && whole[static_cast<std::size_t>(w.kept)].id >= 0) {
      Whole& k = whole[static_cast<std::size_t>(w.kept)];
      w.id = k.id;  // the older tensors, freed where this copy ends
      k.id = b.alloc(k.bytes, k.count, slot, k.label);
      return;
    }
    w.id = b.alloc(w.bytes, w.count, slot, w.label);
  };
  // Lines made by the lm_head and loss come after the layers in forward.
  auto late_in_forward = [](const LedgerItem& i) {
    return i.tenant == Tenant::logits || (i.tenant == Tenant::activations &&
                                          !live(i.live, static_cast<int>(Phase::end_of_backward)));
  };
  const std::size_t layers = p.layer_terms.size();
  std::vector<std::vector<std::int32_t>> act_ids(layers);
  for (std::size_t i = 0; i < layers; ++i) act_ids[i].reserve(p.layer_terms[i].size());
  std::vector<std::int32_t> input_ids(layers, -1);
  std::vector<Split*> splits = {&p.weights, &p.master, &p.grads, &p.states, &p.scratch};
  // Room for the whole stream at once: an allocation and a free per run of each line, piece and
  // saved tensor (at most one forward and one backward batch of a layer's per step). Growing it by
  // doubling copied it, and the abandoned buffers left the C library's heap trimmed and refaulted
  // between the replays solve and advise make.
  const std::size_t steps = kPhaseSlots / kPhaseCount;
  std::size_t allocations = 0;
  for (const Whole& w : whole) allocations += run_count(w.item->live);
  for (const Split* s : splits) allocations += s->pieces.size() * run_count(s->live);
  allocations += p.casts.pieces.size() * run_count(p.casts.live);
  for (const std::vector<std::int64_t>& terms : p.layer_terms) {
    allocations += steps * (terms.size() + 2);  // saved tensors or input, recompute, transient
  }
  for (const std::vector<std::int64_t>& held : p.layer_held) allocations += steps * held.size();
  allocations += steps * p.final_held.size();
  b.out.events.reserve(2 * allocations);

  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    const Phase ph = phase_of(slot);
    // Whole lines that start here (the head's and loss's after the layers, in forward).
    for (Whole& w : whole) {
      if (run_starts(w.item->live, slot) && !(ph == Phase::forward && late_in_forward(*w.item))) {
        start(w, slot);
      }
    }
    // Parameter-shaped splits that start here, except gradients made during backward.
    for (Split* s : splits) {
      if (s == &p.grads && ph == Phase::backward) continue;
      if (run_starts(s->live, slot)) alloc_all(b, *s, slot);
    }
    // The QLoRA load transient after the weights it is quantised among.
    if (live(load_live, slot)) load_sequence(ctx, b, slot);
    // The held split is made where its run starts, and again where a kept line's previous-step
    // copy is live (the older tensors then wait in held_old).
    const bool held_again =
        ph == Phase::forward && live(p.held_previous_live, slot) && !p.held_ids.empty();
    const bool held_here = ph == Phase::forward && (run_starts(p.held_live, slot) || held_again);
    if (held_again) {
      p.held_old = std::move(p.held_ids);
      p.held_ids.clear();
    }
    if (ph == Phase::forward && p.layered && live(p.saved_live, slot)) {
      for (std::size_t i = 0; i < layers; ++i) {
        if (run_starts(p.casts.live, slot)) {
          alloc_pieces(b, p.casts, slot, static_cast<std::int64_t>(i), false, &p.cast_ids[i]);
        }
        if (p.checkpointed) {
          input_ids[i] = b.alloc(p.layer_input[i], 1, slot, p.input_label);
        } else {
          for (std::int64_t bytes : p.layer_terms[i]) {
            act_ids[i].push_back(b.alloc(bytes, 1, slot, p.act_label));
          }
        }
        if (held_here && i < p.layer_held.size()) {
          for (std::int64_t bytes : p.layer_held[i]) {
            p.held_ids.push_back(b.alloc(bytes, 1, slot, p.held_label));
          }
        }
      }
    }
    if (held_here) {
      for (std::int64_t bytes : p.final_held) {
        p.held_ids.push_back(b.alloc(bytes, 1, slot, p.held_label));
      }
    }
    if (ph == Phase::forward) {
      // The head's cast weight, then the lines it and the loss make.
      if (run_starts(p.casts.live, slot)) {
        alloc_pieces(b, p.casts, slot, -1, true, &p.head_cast_ids);
      }
      for (Whole& w : whole) {
        if (run_starts(w.item->live, slot) && late_in_forward(*w.item)) start(w, slot);
      }
    }
    if (ph == Phase::backward) {
      const bool grads_here = run_starts(p.grads.live, slot);
      if (grads_here) alloc_pieces(b, p.grads, slot, -1, true);  // lm_head, final norm
      p.tied_held = -1;
      if (grads_here && p.tied_bytes > 0) {
        alloc_pieces(b, p.grads, slot, -1, false);  // lm_head's gradient of the tied weight
        p.tied_held = p.grads.ids.back();
      }
      for (std::int32_t id : p.head_cast_ids) b.free(id, slot);
      p.head_cast_ids.clear();
      for (std::size_t r = layers; r-- > 0;) {
        std::int32_t t = -1;
        if (!p.transient.empty()) t = b.alloc(p.transient[r], 1, slot, p.transient_label);
        if (p.layered && p.checkpointed) {
          for (std::int64_t bytes : p.layer_terms[r]) {
            act_ids[r].push_back(b.alloc(bytes, 1, slot, p.act_label));
          }
        }
        if (grads_here) alloc_pieces(b, p.grads, slot, static_cast<std::int64_t>(r), false);
        b.free(t, slot);
        for (std::int32_t id : act_ids[r]) b.free(id, slot);
        act_ids[r].clear();
        if (r < p.cast_ids.size()) {
          for (std::int32_t id : p.cast_ids[r]) b.free(id, slot);
          p.cast_ids[r].clear();
        }
        b.free(input_ids[r], slot);
        input_ids[r] = -1;
      }
      if (grads_here) {
        // Layer pieces beyond the activation model's layers, then the embedding.
        for (const Piece& pc : p.grads.pieces) {
          if (pc.layer >= static_cast<std::int64_t>(layers)) {
            p.grads.ids.push_back(b.alloc(pc.bytes, pc.count, slot, p.grads.label));
          }
        }
        if (p.tied_held < 0) alloc_pieces(b, p.grads, slot, -1, false);
      }
    }
    if (ph == Phase::end_of_backward && p.tied_held >= 0) {
      const std::int16_t lab =
          b.label("tied embedding: its dense gradient, then the sum", Tenant::temporaries);
      const std::int32_t dense = b.alloc(p.tied_bytes, 1, slot, lab);
      const std::int32_t sum = b.alloc(p.tied_bytes, 1, slot, p.grads.label);
      b.free(p.tied_held, slot);
      b.free(dense, slot);
      std::replace(p.grads.ids.begin(), p.grads.ids.end(), p.tied_held, sum);
      p.tied_held = -1;
    }
    // Frees at the end of each run.
    if (run_ends(p.scratch.live, slot)) free_all(b, p.scratch, slot);
    if (ends_here(p.held_live, slot)) {
      for (std::int32_t id : p.held_ids) b.free(id, slot);
      p.held_ids.clear();
    }
    if (run_ends(p.held_previous_live, slot)) {
      for (std::int32_t id : p.held_old) b.free(id, slot);
      p.held_old.clear();
    }
    for (Whole& w : whole) {
      if (ends_here(w.item->live, slot)) {
        b.free(w.id, slot);
        w.id = -1;
      }
    }
    for (Split* s : splits) {
      if (s != &p.scratch && ends_here(s->live, slot)) free_all(b, *s, slot);
    }
  }
  return std::move(b.out);
}

std::vector<std::int64_t> requested_high_water(std::span<const AllocEvent> events,
                                               int phase_count) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(phase_count), 0);
  std::map<std::int32_t, std::int64_t> bytes;
  std::int64_t now = 0;
  int phase = 0;
  for (const AllocEvent& e : events) {
    while (phase < e.phase) {
      out[static_cast<std::size_t>(phase)] = std::max(out[static_cast<std::size_t>(phase)], now);
      ++phase;
      out[static_cast<std::size_t>(phase)] = now;
    }
    if (e.op == Op::alloc) {
      bytes[e.id] = e.bytes * e.count;
      now += e.bytes * e.count;
    } else {
      now -= bytes[e.id];
      bytes.erase(e.id);
    }
    out[static_cast<std::size_t>(phase)] = std::max(out[static_cast<std::size_t>(phase)], now);
  }
  for (++phase; phase < phase_count; ++phase) out[static_cast<std::size_t>(phase)] = now;
  return out;
}

std::vector<std::int64_t> requested_high_water(const EventStream& stream) {
  return requested_high_water(stream.events, kPhaseSlots);
}

}  // namespace trainmem::gpu

// The allocation event stream against the ledger it comes from: every line's bytes pass through
// the allocator, the per-phase live bytes match the ledger's phases, and the order is PyTorch's.
#include "gpu/alloc_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "gpu/caching_allocator.h"
#include "support/models.h"
#include "trainmem/estimate.h"

namespace trainmem::gpu {
namespace {

using testing_support::validation_model;

struct Case {
  const char* model;
  Method method;
  Checkpointing ckpt;
  OptimizerKind opt;
};

TrainingPlan plan_for(const Case& c) {
  TrainingPlan p;
  p.method = c.method;
  p.checkpointing = c.ckpt;
  p.optimizer = c.opt;
  p.batch = 2;
  p.seq = 256;
  return p;
}

// Every alloc is freed at most once, and frees name live ids.
void expect_well_formed(const EventStream& s) {
  std::map<std::int32_t, int> state;  // 1 live, 2 freed
  for (const AllocEvent& e : s.events) {
    if (e.op == Op::alloc) {
      EXPECT_EQ(state[e.id], 0) << "id " << e.id << " allocated twice";
      state[e.id] = 1;
      EXPECT_GT(e.bytes, 0);
    } else {
      EXPECT_EQ(state[e.id], 1) << "id " << e.id << " freed while not live";
      state[e.id] = 2;
    }
  }
}

// Phase by phase the stream's live bytes are the ledger's. Late backward: the ledger's moment
// (every gradient, one layer's activations) is in the stream, and the phase also inherits what
// backward_start left, so it is at least the ledger's.
void expect_phases_match(const Ledger& l, const EventStream& s) {
  const Totals t = totals(l);
  const std::vector<std::int64_t> hw = requested_high_water(s);
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    SCOPED_TRACE(slot_name(slot));
    const std::int64_t want = t.by_slot[static_cast<std::size_t>(slot)];
    if (static_cast<Phase>(slot % kPhaseCount) == Phase::backward) {
      EXPECT_GE(hw[static_cast<std::size_t>(slot)], want);
    } else {
      EXPECT_EQ(hw[static_cast<std::size_t>(slot)], want);
    }
  }
}

TEST(AllocEvents, PhasesReproduceTheLedger) {
  const Case cases[] = {
      {"qwen3-tiny", Method::full, Checkpointing::none, OptimizerKind::adamw},
      {"qwen3-tiny", Method::lora, Checkpointing::full, OptimizerKind::adamw},
      {"llama-tiny", Method::full, Checkpointing::selective, OptimizerKind::adamw_8bit},
      {"qwen3moe-tiny", Method::full, Checkpointing::none, OptimizerKind::adamw},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    const LoadedModel m = validation_model(c.model);
    const TrainingPlan p = plan_for(c);
    const Ledger l = estimate(m, p);
    const Totals t = totals(l);
    const EventStream s = alloc_events(m, p, l);
    expect_well_formed(s);
    EXPECT_GE(s.items_split, 5);  // weights, master, grads, states, activations (+ scratch)
    expect_phases_match(l, s);
    const std::vector<std::int64_t> hw = requested_high_water(s);
    EXPECT_EQ(*std::max_element(hw.begin(), hw.end()), t.peak_bytes);
  }
}

TEST(AllocEvents, GradientsInReverseLayerOrderAndStatesOnFirstStep) {
  const LoadedModel m = validation_model("qwen3-tiny");
  TrainingPlan p;
  const Ledger l = estimate(m, p);
  const EventStream s = alloc_events(m, p, l);
  std::int32_t grad_label = -1, state_label = -1, act_label = -1;
  for (std::size_t i = 0; i < s.labels.size(); ++i) {
    if (s.label_tenant[i] == Tenant::gradients) grad_label = static_cast<std::int32_t>(i);
    if (s.label_tenant[i] == Tenant::optimizer_states) state_label = static_cast<std::int32_t>(i);
    if (s.labels[i].rfind("saved activations", 0) == 0) act_label = static_cast<std::int32_t>(i);
  }
  ASSERT_GE(grad_label, 0);
  ASSERT_GE(state_label, 0);
  ASSERT_GE(act_label, 0);
  int states_first = 0, states_steady = 0;
  int first_grad = -1, last_act_alloc = -1, first_free_in_backward = -1;
  for (std::size_t k = 0; k < s.events.size(); ++k) {
    const AllocEvent& e = s.events[k];
    if (e.op == Op::alloc && e.label == state_label) {
      (e.phase == static_cast<int>(Phase::optimizer_step) ? states_first : states_steady)++;
    }
    if (e.phase >= kPhaseCount) continue;  // first step only below
    if (e.op == Op::alloc && e.label == grad_label && first_grad < 0)
      first_grad = static_cast<int>(k);
    if (e.op == Op::alloc && e.label == act_label) last_act_alloc = static_cast<int>(k);
    if (e.op == Op::free && e.phase == static_cast<int>(Phase::backward) &&
        first_free_in_backward < 0) {
      first_free_in_backward = static_cast<int>(k);
    }
  }
  EXPECT_GT(states_first, 0);
  EXPECT_EQ(states_steady, 0);  // created once, lazily, then kept
  EXPECT_GT(first_grad, last_act_alloc);
  // The last layer's activations are freed once its gradients exist, before earlier layers'.
  EXPECT_GT(first_free_in_backward, first_grad);
  // Saved tensors are released layer by layer from the last: the first activation freed in
  // backward is among the last layer's, the last one freed among the first layer's.
  std::vector<std::int32_t> act_ids, freed_ids;
  for (const AllocEvent& e : s.events) {
    if (e.phase >= kPhaseCount) break;
    if (e.op == Op::alloc && e.label == act_label) act_ids.push_back(e.id);
  }
  for (const AllocEvent& e : s.events) {
    if (e.phase >= kPhaseCount) break;
    if (e.op == Op::free && std::find(act_ids.begin(), act_ids.end(), e.id) != act_ids.end()) {
      freed_ids.push_back(e.id);
    }
  }
  ASSERT_EQ(freed_ids.size(), act_ids.size());
  const std::size_t per_layer = act_ids.size() / static_cast<std::size_t>(m.spec.layers);
  ASSERT_GT(per_layer, 0u);
  EXPECT_GE(freed_ids.front(), act_ids[act_ids.size() - per_layer]);
  EXPECT_LT(freed_ids.back(), act_ids[per_layer]);
}

// The loss's backward line (logits.loss_grads) in the first step's backward_start: the sizes of
// the tensors it is allocated as, in order.
std::vector<std::int64_t> loss_grad_allocs(const TrainingPlan& p) {
  const LoadedModel m = validation_model("qwen3-tiny");
  const Ledger l = estimate(m, p);
  const EventStream s = alloc_events(m, p, l);
  std::string label;
  for (const LedgerItem& i : l.items) {
    if (i.id == "logits.loss_grads") label = i.label;
  }
  std::vector<std::int64_t> out;
  for (const AllocEvent& e : s.events) {
    if (e.op != Op::alloc || e.phase != static_cast<int>(Phase::backward_start)) continue;
    if (e.label >= 0 &&
        s.labels[static_cast<std::size_t>(e.label)].find(label) != std::string::npos) {
      out.insert(out.end(), static_cast<std::size_t>(e.count), e.bytes);  // count equal tensors
    }
  }
  return out;
}

// By id, not by size: the eager loss's gradients are two equal tensors whatever their dtype (the
// fp32 loss, and the bf16 loss of torchtune < 0.3 that the old size test missed); the compiled
// loss writes one. qwen3-tiny, b2 x s256 = 512 tokens, V 8,192.
TEST(AllocEvents, LossGradientsAreTwoTensorsEagerAndOneCompiled) {
  TrainingPlan p;
  p.precision = Precision::bf16;
  p.batch = 2;
  p.seq = 256;
  const std::int64_t nv = 512 * 8192;
  EXPECT_EQ(loss_grad_allocs(p), (std::vector<std::int64_t>{4 * nv, 4 * nv}));
  TrainingPlan bf16_loss = p;
  bf16_loss.behaviour.loss_upcast = false;
  EXPECT_EQ(loss_grad_allocs(bf16_loss), (std::vector<std::int64_t>{2 * nv, 2 * nv}));
  TrainingPlan compiled = p;
  compiled.behaviour.compiled_loss = true;
  EXPECT_EQ(loss_grad_allocs(compiled), (std::vector<std::int64_t>{2 * nv}));
}

// Autocast's bf16 weight copies are one allocation per fp32 matmul weight, a layer's made in
// forward and freed in backward with its saved tensors, the last layer's first. qwen3-tiny (h 128,
// 4 layers, untied head 8,192 x 128): the largest copy is the head's, 8,192 x 128 x 2 B.
TEST(AllocEvents, AutocastCopiesArePerTensorAndFreedLayerByLayer) {
  const LoadedModel m = validation_model("qwen3-tiny");
  TrainingPlan p =
      plan_for({"qwen3-tiny", Method::full, Checkpointing::none, OptimizerKind::adamw});
  p.precision = Precision::autocast_bf16;
  const Ledger l = estimate(m, p);
  const EventStream s = alloc_events(m, p, l);
  expect_well_formed(s);
  expect_phases_match(l, s);
  std::int32_t label = -1;
  for (std::size_t i = 0; i < s.labels.size(); ++i) {
    if (s.labels[i].rfind("autocast bf16 weight copy", 0) == 0) label = static_cast<int>(i);
  }
  ASSERT_GE(label, 0) << "the line stayed one block";
  std::vector<std::int32_t> made;
  std::int64_t bytes = 0, largest = 0;
  for (const AllocEvent& e : s.events) {
    if (e.phase >= kPhaseCount || e.op != Op::alloc || e.label != label) continue;
    EXPECT_EQ(e.phase, static_cast<int>(Phase::forward));
    made.push_back(e.id);
    bytes += e.bytes * e.count;
    largest = std::max(largest, e.bytes);
  }
  for (const LedgerItem& i : l.items) {
    if (i.id == "temporaries.autocast_weight_copies") {
      EXPECT_EQ(bytes, i.bytes);
    }
  }
  EXPECT_EQ(largest, 8'192 * 128 * 2);
  EXPECT_GT(made.size(), 4u * 7u);  // the layers' seven matmul weights each, and the head's
  // Freed in backward: the head's first, then the last layer's before the first layer's.
  std::vector<std::int32_t> freed;
  for (const AllocEvent& e : s.events) {
    if (e.phase >= kPhaseCount || e.op != Op::free) continue;
    if (std::find(made.begin(), made.end(), e.id) == made.end()) continue;
    EXPECT_EQ(e.phase, static_cast<int>(Phase::backward));
    freed.push_back(e.id);
  }
  ASSERT_EQ(freed.size(), made.size());
  EXPECT_EQ(freed.front(), made.back());           // the head's, made last
  EXPECT_LT(freed.back(), made[made.size() / 2]);  // the first layer's, made first
}

// A tied embedding's gradients as the engine makes them (input_buffer.cpp accumulate): lm_head's
// with the head's gradients at the start of backward, held; at the end the embedding's dense
// gradient and the out-of-place sum, then both addends are freed and the sum stays as `.grad`
// until zero_grad. Qwen3-0.6B ties V 151,936 x h 1,024: each is 311,164,928 B in bf16.
TEST(AllocEvents, TiedEmbeddingGradientIsHeldThenSummedOutOfPlace) {
  auto m = load_preset("qwen3-0.6b");
  ASSERT_TRUE(m.ok());
  TrainingPlan p;
  p.precision = Precision::bf16;
  const Ledger l = estimate(m.value(), p);
  const EventStream s = alloc_events(m.value(), p, l);
  expect_well_formed(s);
  expect_phases_match(l, s);
  constexpr std::int64_t kVh = 311'164'928;
  // The first step's backward events of that size (allocations and their frees).
  std::vector<const AllocEvent*> first;
  std::map<std::int32_t, const AllocEvent*> by_id;
  for (const AllocEvent& e : s.events) {
    if (e.phase >= kPhaseCount) break;
    if (e.op == Op::alloc) by_id[e.id] = &e;
    const bool sized = e.op == Op::alloc ? e.bytes == kVh : by_id[e.id]->bytes == kVh;
    const bool late = e.phase == static_cast<int>(Phase::backward) ||
                      e.phase == static_cast<int>(Phase::end_of_backward);
    if (sized && late) first.push_back(&e);
  }
  // alloc held (backward), alloc dense, alloc sum (end_of_backward), free held, free dense.
  ASSERT_EQ(first.size(), 5u);
  EXPECT_EQ(first[0]->phase, static_cast<int>(Phase::backward));
  EXPECT_EQ(first[0]->op, Op::alloc);
  for (int k : {1, 2, 3, 4}) EXPECT_EQ(first[k]->phase, static_cast<int>(Phase::end_of_backward));
  EXPECT_EQ(first[3]->op, Op::free);
  EXPECT_EQ(first[3]->id, first[0]->id);
  EXPECT_EQ(first[4]->id, first[1]->id);
  // The sum is a gradient, freed by zero_grad in the optimizer step.
  EXPECT_EQ(s.label_tenant[static_cast<std::size_t>(first[2]->label)], Tenant::gradients);
}

TEST(AllocEvents, PagedOptimizerStateStaysOutsideThePool) {
  // bitsandbytes pages only the state of tensors of at least 1e5 elements (get_state_buffer):
  // in qwen3-tiny those are the embedding and the untied lm_head, 8,192 x 128 each, two fp32
  // states: 2 x 1,048,576 x 8 B outside the pool. The other tensors (4 layers x 196,928 params
  // and the final norm's 128: 787,840 params x 8 B) get zeros_like in PyTorch's pool.
  const LoadedModel m = validation_model("qwen3-tiny");
  TrainingPlan p;
  p.optimizer = OptimizerKind::paged_adamw;
  const Ledger l = estimate(m, p);
  const EventStream s = alloc_events(m, p, l);
  EXPECT_EQ(s.outside_pool_bytes, 2 * 1'048'576 * 8);
  EXPECT_EQ(totals(l).by_tenant[static_cast<std::size_t>(Tenant::optimizer_states)],
            s.outside_pool_bytes + 787'840 * 8);
  std::int64_t pooled = 0;
  for (const AllocEvent& e : s.events) {
    if (e.op == Op::alloc && e.label >= 0 &&
        s.label_tenant[static_cast<std::size_t>(e.label)] == Tenant::optimizer_states) {
      pooled += e.bytes * e.count;
    }
  }
  EXPECT_EQ(pooled, 787'840 * 8);
}

TEST(AllocEvents, GraphHeldInputsArePerLayerTensorsFreedWithTheGraph) {
  const LoadedModel m = validation_model("qwen3-tiny");
  for (const bool kept : {false, true}) {
    SCOPED_TRACE(kept ? "the loop keeps the output" : "the loss is let go after backward");
    TrainingPlan p =
        plan_for({"qwen3-tiny", Method::qlora, Checkpointing::none, OptimizerKind::adamw});
    p.lora.targets = {"q", "v"};
    p.behaviour.bnb_saves_4bit_input = true;
    p.behaviour.outputs_kept = kept;
    const Ledger l = estimate(m, p);
    const LedgerItem* held = nullptr;
    for (const LedgerItem& i : l.items) {
      if (i.id == "activations.held_by_graph") held = &i;
    }
    ASSERT_NE(held, nullptr);
    const EventStream s = alloc_events(m, p, l);
    expect_well_formed(s);
    expect_phases_match(l, s);
    // Four distinct 4-bit inputs per layer (q/k/v input, attention output, MLP input, down_proj
    // input), 4 layers, allocated in each forward that starts the held line's run.
    std::map<std::int32_t, std::int64_t> held_ids;  // id -> step
    std::array<std::int64_t, 2> count{}, bytes{};
    for (const AllocEvent& e : s.events) {
      if (e.op != Op::alloc || e.label < 0 ||
          s.labels[static_cast<std::size_t>(e.label)] != held->label) {
        continue;
      }
      const std::size_t step = e.phase < kPhaseCount ? 0 : 1;
      EXPECT_EQ(e.phase % kPhaseCount, static_cast<int>(Phase::forward));
      count[step] += e.count;
      bytes[step] += e.bytes * e.count;
      held_ids.emplace(e.id, step);
    }
    EXPECT_EQ(count[0], 16);
    EXPECT_EQ(bytes[0], held->bytes);
    // Each step makes its own. The Trainer's graph dies at the end of backward; a kept graph
    // lives until the next forward returns, so the first step's are freed in the steady forward
    // (and the steady step's cross the stream's end).
    EXPECT_EQ(count[1], 16);
    EXPECT_EQ(bytes[1], held->bytes);
    int freed_first = 0;
    for (const AllocEvent& e : s.events) {
      if (e.op != Op::free || !held_ids.contains(e.id)) continue;
      const std::int64_t step = held_ids.at(e.id);
      if (kept) {
        EXPECT_EQ(step, 0);
        EXPECT_EQ(e.phase, kPhaseCount + static_cast<int>(Phase::forward));
      } else {
        EXPECT_EQ(e.phase, step * kPhaseCount + static_cast<int>(Phase::end_of_backward));
      }
      freed_first += step == 0 ? 1 : 0;
    }
    EXPECT_EQ(freed_first, 16);
  }
}

TEST(AllocEvents, TextbookHasNoStream) {
  const LoadedModel m = validation_model("qwen3-tiny");
  TrainingPlan p;
  p.convention = Convention::textbook;
  EXPECT_TRUE(alloc_events(m, p, estimate(m, p)).events.empty());
}

}  // namespace
}  // namespace trainmem::gpu

namespace trainmem::gpu {
namespace {

TEST(AllocEvents, BulkReplayMatchesOneByOneOnRealStreams) {
  for (const char* name : {"qwen3-tiny", "qwen3moe-tiny", "llama-tiny"}) {
    SCOPED_TRACE(name);
    const LoadedModel m = validation_model(name);
    TrainingPlan p;
    p.batch = 2;
    p.seq = 128;
    const EventStream s = alloc_events(m, p, estimate(m, p));
    const ReplayResult a = replay(s.events, {}, {}, kPhaseSlots, true);
    const ReplayResult b = replay(s.events, {}, {}, kPhaseSlots, false);
    EXPECT_EQ(a.peak_allocated_bytes, b.peak_allocated_bytes);
    EXPECT_EQ(a.peak_reserved_bytes, b.peak_reserved_bytes);
    for (int slot = 0; slot < kPhaseSlots; ++slot) {
      const auto k = static_cast<std::size_t>(slot);
      EXPECT_EQ(a.phases[k].reserved_bytes, b.phases[k].reserved_bytes) << slot;
      EXPECT_EQ(a.phases[k].largest_free_bytes, b.phases[k].largest_free_bytes) << slot;
    }
  }
}

}  // namespace
}  // namespace trainmem::gpu

// run_events(): several steps of different lengths chained through one event stream
// (run_events.h).
//
// alloc_events lays out two steps: the first (phases 0 .. kPhaseCount - 1) and a steady one. What
// crosses from the first step into the steady one is freed there: its ids were allocated in the
// first step. What crosses out of the steady step is allocated there and never freed. The two
// sets are the same lines in the same order (one step hands the next what it was handed), so the
// k-th allocation that the steady step of step i's stream frees from its first step stands for
// the k-th allocation step i - 1 left live.
#include "gpu/run_events.h"

#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "gpu/alloc_events.h"
#include "trainmem/distributed.h"

namespace trainmem::gpu {
namespace {

struct Stream {
  std::vector<AllocEvent> events;
  std::int64_t steady_tensors = 0;  // tensors the steady step allocates
};

std::int64_t steady_tensors(const std::vector<AllocEvent>& events) {
  std::int64_t n = 0;
  for (const AllocEvent& e : events) {
    if (e.op == Op::alloc && e.phase >= kPhaseCount) n += e.count;
  }
  return n;
}

Stream step_stream(const LoadedModel& model, const TrainingPlan& plan, std::int64_t length,
                   std::int64_t cublas_workspace_bytes) {
  TrainingPlan p = plan;
  p.seq = length;
  // Across ranks, the most-loaded rank's ledger at this length, as the single step is priced
  // (validate's multi-rank rows, judge_distributed).
  const Ledger l = is_single_device(p.layout) ? estimate(model, p) : most_loaded_ledger(model, p);
  Stream s;
  s.events =
      alloc_events(model, p, l,
                   {.close_steady_step = true, .cublas_workspace_bytes = cublas_workspace_bytes})
          .events;
  s.steady_tensors = steady_tensors(s.events);
  return s;
}

bool in_first_step(const AllocEvent& e) {
  return e.phase < kPhaseCount;
}

// Ids allocated in the steady step and never freed, in allocation order.
std::vector<std::int32_t> left_live(const std::vector<AllocEvent>& events) {
  std::vector<std::int32_t> order;
  std::unordered_set<std::int32_t> freed;
  for (const AllocEvent& e : events) {
    if (in_first_step(e)) continue;
    if (e.op == Op::alloc) order.push_back(e.id);
    if (e.op == Op::free) freed.insert(e.id);
  }
  std::vector<std::int32_t> out;
  for (std::int32_t id : order) {
    if (!freed.contains(id)) out.push_back(id);
  }
  return out;
}

// Ids allocated in the first step and freed in the steady one, in allocation order.
std::vector<std::int32_t> handed_over(const std::vector<AllocEvent>& events) {
  std::unordered_set<std::int32_t> freed_steady;
  for (const AllocEvent& e : events) {
    if (!in_first_step(e) && e.op == Op::free) freed_steady.insert(e.id);
  }
  std::vector<std::int32_t> out;
  for (const AllocEvent& e : events) {
    if (in_first_step(e) && e.op == Op::alloc && freed_steady.contains(e.id)) out.push_back(e.id);
  }
  return out;
}

}  // namespace

int run_phase_slot(int phase) {
  if (phase < kPhaseCount) return phase;
  return kPhaseCount + phase % kPhaseCount;
}

std::optional<RunStream> run_events(const LoadedModel& model, const TrainingPlan& plan,
                                    std::span<const std::int64_t> lengths,
                                    std::int64_t cublas_workspace_bytes) {
  if (lengths.empty()) return std::nullopt;
  std::map<std::int64_t, Stream> by_length;  // a run repeats few lengths (often the longest)
  auto stream_at = [&](std::int64_t length) -> const Stream& {
    auto it = by_length.find(length);
    if (it == by_length.end())
      it =
          by_length.emplace(length, step_stream(model, plan, length, cublas_workspace_bytes)).first;
    return it->second;
  };

  // Step 1 is the first step of its length's stream (it creates the optimizer state); each later
  // step is the steady step of its own length's stream. Every micro-batch is replayed once.
  RunStream run;
  const Stream& first = stream_at(lengths.front());
  std::int32_t next_id = 0;
  std::int64_t tensors = 0;
  for (const AllocEvent& e : first.events) {
    if (!in_first_step(e)) continue;
    run.events.push_back(e);
    next_id = std::max(next_id, e.id + 1);
    tensors += e.op == Op::alloc ? e.count : 0;
  }
  std::vector<std::int32_t> live_out = handed_over(first.events);

  std::size_t steps = 1;
  for (std::size_t i = 1; i < lengths.size(); ++i, ++steps) {
    const Stream& s = stream_at(lengths[i]);
    if (run.events.size() + s.events.size() > kMaxRunEvents) break;
    if (tensors + s.steady_tensors > kMaxRunTensors) break;
    // AllocEvent::phase is 16 bits: at most 4,681 steps.
    if (static_cast<std::int64_t>(i + 1) * kPhaseCount > INT16_MAX) break;
    tensors += s.steady_tensors;
    const std::vector<std::int32_t> in = handed_over(s.events);
    if (in.size() != live_out.size()) return std::nullopt;
    std::unordered_map<std::int32_t, std::int32_t> id_of;  // this stream's id -> the run's
    for (std::size_t k = 0; k < in.size(); ++k) id_of.emplace(in[k], live_out[k]);
    const auto base = static_cast<std::int16_t>(i * kPhaseCount);
    for (const AllocEvent& e : s.events) {
      if (in_first_step(e)) continue;
      AllocEvent out = e;
      out.phase = static_cast<std::int16_t>(base + (e.phase - kPhaseCount));
      if (e.op == Op::alloc) {
        out.id = next_id++;
        id_of.emplace(e.id, out.id);
      } else {
        auto it = id_of.find(e.id);
        if (it == id_of.end()) return std::nullopt;  // frees a first-step line never handed over
        out.id = it->second;
      }
      run.events.push_back(out);
    }
    std::vector<std::int32_t> next_out;
    for (std::int32_t id : left_live(s.events)) next_out.push_back(id_of.at(id));
    live_out = std::move(next_out);
  }
  run.steps = static_cast<int>(steps);
  run.phase_count = run.steps * kPhaseCount;
  return run;
}

}  // namespace trainmem::gpu


#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "gpu/caching_allocator.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"

namespace trainmem {
namespace {

struct Change {
  std::string change;
  std::string flags;
  std::string cost;
  int cost_rank = 0;
  std::function<void(TrainingPlan&)> apply;
  bool stack = true;  // tried in combinations (false: a weaker sibling of another change)
};

// The single changes that apply to `plan`, in order of cost.
std::vector<Change> candidates(const TrainingPlan& plan) {
  std::vector<Change> out;
  // mlx-lm on Apple unified memory (the mlx profile): no CUDA caching allocator, no Liger or TRL
  // loss, no bitsandbytes optimizer, no torch optimizer implementations; checkpointing (its
  // --grad-checkpoint), LoRA and a quantised base are its own options.
  const bool cuda_stack = !plan.behaviour.unified_memory;
  // The allocator's own remedy, as PyTorch's out-of-memory message suggests: expandable segments
  // grow one mapping instead of caching a segment per large block size, so less is reserved
  // beyond what is allocated (CUDACachingAllocator.cpp ExpandableSegment; docs/gpu.md). It
  // changes no tensor, only what the card holds for them.
  const auto conf = gpu::parse_alloc_conf(plan.alloc_conf, "--alloc-conf");
  if (cuda_stack && conf && !conf->expandable_segments) {
    const std::string value = plan.alloc_conf.empty()
                                  ? std::string("expandable_segments:True")
                                  : plan.alloc_conf + ",expandable_segments:True";
    out.push_back(
        {"expandable segments in the CUDA caching allocator "
         "(PYTORCH_CUDA_ALLOC_CONF=" +
             value + ")",
         "--alloc-conf " + value,
         "no effect on training; set in the environment before the first CUDA "
         "allocation (PyTorch >= 2.1)",
         0, [value](TrainingPlan& p) { p.alloc_conf = value; }});
  }
  if (cuda_stack && plan.loss == Loss::full) {
    out.push_back(
        {"chunked cross-entropy loss (TRL's loss_type=\"chunked_nll\", its SFT "
         "default since 1.7)",
         "--loss chunked", "no quality change; a little more kernel launch overhead", 1,
         [](TrainingPlan& p) { p.loss = Loss::chunked; }, false});
    out.push_back({"fused linear cross-entropy (Liger: use_liger_kernel=True in the HF Trainer)",
                   "--loss fused", "no quality change; needs the liger-kernel package", 2,
                   [](TrainingPlan& p) { p.loss = Loss::fused; }});
  }
  if (plan.attention == Attention::eager) {
    out.push_back({"SDPA attention", "--attention sdpa", "no quality change", 1,
                   [](TrainingPlan& p) { p.attention = Attention::sdpa; }});
  }
  if (plan.checkpointing == Checkpointing::none) {
    out.push_back({"selective activation checkpointing", "--checkpointing selective",
                   "about 5-10% more compute: cheap parts of each layer are recomputed", 3,
                   [](TrainingPlan& p) { p.checkpointing = Checkpointing::selective; }, false});
  }
  if (plan.checkpointing != Checkpointing::full) {
    out.push_back({"full activation checkpointing", "--checkpointing full",
                   "about 30-40% more compute: every layer's forward runs twice", 4,
                   [](TrainingPlan& p) { p.checkpointing = Checkpointing::full; }});
  }
  if (cuda_stack && plan.optimizer_impl != OptimizerImpl::fused &&
      plan.optimizer == OptimizerKind::adamw) {
    // torch/optim/adamw.py _fused_adamw: one kernel per group, no step scratch.
    out.push_back({"fused AdamW step (HF optim adamw_torch_fused)", "--optimizer-impl fused",
                   "no quality change; the HF Trainer's default on current torch", 0,
                   [](TrainingPlan& p) { p.optimizer_impl = OptimizerImpl::fused; }});
  }
  if (cuda_stack && plan.optimizer_impl == OptimizerImpl::foreach) {
    out.push_back({"for-loop optimizer step", "--optimizer-impl for-loop",
                   "a slower optimizer step; no quality change", 3,
                   [](TrainingPlan& p) { p.optimizer_impl = OptimizerImpl::for_loop; }});
  }
  if (plan.eval_strategy != EvalStrategy::no && plan.eval_batch > 1) {
    // The Trainer's evaluation runs at per_device_eval_batch_size (8 unless set), often above a
    // small training micro-batch: evaluating at the training micro-batch, or one sequence at a
    // time, shrinks the evaluation's logits chain (run_phases.h) and leaves training unchanged.
    const auto eval_at = [](std::int64_t b) { return [b](TrainingPlan& p) { p.eval_batch = b; }; };
    const char* cost = "no effect on training; evaluation runs in more, smaller batches";
    if (plan.batch > 1 && plan.batch < plan.eval_batch) {
      out.push_back({fmt::format("evaluation micro-batch {}, the training one "
                                 "(per_device_eval_batch_size={})",
                                 plan.batch, plan.batch),
                     fmt::format("--eval-batch {}", plan.batch), cost, 0, eval_at(plan.batch)});
    }
    out.push_back({"evaluation micro-batch 1 (per_device_eval_batch_size=1)", "--eval-batch 1",
                   cost, 0, eval_at(1)});
  }
  const bool full_states = plan.method != Method::lora && plan.method != Method::qlora;
  if (cuda_stack && plan.optimizer == OptimizerKind::adamw) {
    out.push_back({"8-bit AdamW (bitsandbytes)", "--optimizer adamw-8bit",
                   "block-quantised moments; loss curves usually match 32-bit Adam closely", 5,
                   [](TrainingPlan& p) { p.optimizer = OptimizerKind::adamw_8bit; }});
    out.push_back({"paged 8-bit AdamW", "--optimizer paged-adamw-8bit",
                   "8-bit moments that page to CPU under pressure; slow steps when they do", 6,
                   [](TrainingPlan& p) { p.optimizer = OptimizerKind::paged_adamw_8bit; }, false});
  }
  if (full_states) {
    // Under bf16-mixed the base would stay fp32; LoRA recipes load it in bf16, which is what the
    // command line prices for a LoRA plan without --precision: say it in the flags.
    const bool bf16_base = plan.precision == Precision::autocast_bf16;
    out.push_back({bf16_base ? "LoRA rank 16 on all projections, base loaded in bf16"
                             : "LoRA rank 16 on all projections",
                   bf16_base ? "--method lora --precision bf16" : "--method lora",
                   "base frozen: close to full fine-tuning for instruction tuning, weaker at "
                   "teaching new knowledge",
                   7, [bf16_base](TrainingPlan& p) {
                     p.method = Method::lora;
                     p.freeze = {};
                     if (bf16_base) p.precision = Precision::bf16;
                   }});
  }
  if (plan.method != Method::qlora) {
    // A LoRA plan without --precision prices a bf16 base (settings.cpp); --method qlora alone
    // would re-resolve to the profile's precision, so the flags carry the one priced here.
    const bool keep_bf16 = plan.precision == Precision::bf16;
    out.push_back({"QLoRA: LoRA on a 4-bit NF4 base",
                   keep_bf16 ? "--method qlora --precision bf16" : "--method qlora",
                   "4-bit base: a small quality loss and slower steps (dequantisation)", 8,
                   [](TrainingPlan& p) {
                     p.method = Method::qlora;
                     p.freeze = {};
                   }});
  }
  return out;
}

AdviceOption price(const LoadedModel& model, const TrainingPlan& plan, const Device& device,
                   std::string change, std::string flags, std::string cost, int rank, int parts) {
  AdviceOption o;
  o.change = std::move(change);
  o.flags = std::move(flags);
  o.cost = std::move(cost);
  o.cost_rank = rank;
  o.parts = parts;
  o.plan = plan;
  const Fit f = judge(model, plan, device);
  o.peak_bytes = f.peak_bytes;
  o.fits = f.fits;
  o.margin_bytes = f.margin_bytes;
  return o;
}

// Batch and sequence changes on top of `base`: the smallest micro-batch that keeps the effective
// batch with more accumulation, and the longest sequence that fits.
void shape_changes(const LoadedModel& model, const TrainingPlan& base, const Device& device,
                   const std::string& prefix_change, const std::string& prefix_flags,
                   const std::string& prefix_cost, int prefix_rank, int prefix_parts,
                   std::vector<AdviceOption>& out) {
  const auto join = [](const std::string& a, const std::string& b, const char* sep) {
    return a.empty() ? b : a + sep + b;
  };
  // Smaller micro-batch, same effective batch: the largest divisor of batch that fits.
  for (std::int64_t b = base.batch - 1; b >= 1; --b) {
    if (base.batch % b != 0) continue;
    TrainingPlan p = base;
    p.batch = b;
    p.grad_accum = base.grad_accum * (base.batch / b);
    if (validate(p)) continue;
    if (!judge(model, p, device).fits && b > 1) continue;
    out.push_back(price(
        model, p, device,
        join(prefix_change,
             fmt::format("micro-batch {} with gradient accumulation {} (same effective batch)", b,
                         p.grad_accum),
             " + "),
        join(prefix_flags, fmt::format("--batch {} --grad-accum {}", b, p.grad_accum), " "),
        join(prefix_cost,
             fmt::format("same optimizer behaviour; about {}x as many smaller forward/backward "
                         "passes per step, so lower GPU utilisation",
                         base.batch / b),
             "; "),
        prefix_rank + 5, prefix_parts + 1));
    break;
  }
  // Shorter sequence: the longest that fits, on a 64-token grid.
  SolveOptions by_64;
  by_64.step = 64;
  auto r = solve(model, base, device, SolveFor::max_seq, by_64);
  if (r && r->found && r->answer < base.seq && r->answer >= 128) {
    TrainingPlan p = base;
    p.seq = r->answer;
    out.push_back(price(
        model, p, device, join(prefix_change, fmt::format("max sequence {} tokens", p.seq), " + "),
        join(prefix_flags, fmt::format("--seq {}", p.seq), " "),
        join(prefix_cost,
             fmt::format("examples longer than {} tokens are truncated or dropped: a quality "
                         "risk for long-context data",
                         p.seq),
             "; "),
        prefix_rank + 9, prefix_parts + 1));
  }
}

// Every combination of the stackable changes, per knob none or one of its alternatives (full
// checkpointing, fused loss, 8-bit AdamW, LoRA or QLoRA, ...), as a mixed-radix code: digit k is
// 0 for "knob k unchanged" or 1 + the index of its alternative.
struct Combinations {
  const std::vector<Change>& changes;
  std::vector<std::vector<std::size_t>> knobs;  // alternatives, as indices into changes
  std::vector<std::size_t> radix;
  std::size_t total = 1;

  explicit Combinations(const std::vector<Change>& all) : changes(all) {
    const auto group_of = [](const Change& c) { return c.flags.substr(0, c.flags.find(' ')); };
    for (std::size_t i = 0; i < changes.size(); ++i) {
      if (!changes[i].stack) continue;
      bool placed = false;
      for (auto& k : knobs) {
        if (group_of(changes[k.front()]) == group_of(changes[i])) {
          k.push_back(i);
          placed = true;
        }
      }
      if (!placed) knobs.push_back({i});
    }
    for (const auto& k : knobs) {
      radix.push_back(k.size() + 1);
      total *= k.size() + 1;
    }
  }

  std::vector<std::size_t> digits_of(std::size_t code) const {
    std::vector<std::size_t> d(knobs.size());
    for (std::size_t k = 0; k < knobs.size(); ++k) {
      d[k] = code % radix[k];
      code /= radix[k];
    }
    return d;
  }

  // Applies combination `code` to `p` and describes it; returns how many changes it makes.
  int describe(std::size_t code, std::string& change, std::string& flags, std::string& cost,
               int& rank, TrainingPlan& p) const {
    const auto d = digits_of(code);
    int parts = 0;
    for (std::size_t k = 0; k < knobs.size(); ++k) {
      if (d[k] == 0) continue;
      const Change& c = changes[knobs[k][d[k] - 1]];
      c.apply(p);
      change += (change.empty() ? "" : " + ") + c.change;
      flags += (flags.empty() ? "" : " ") + c.flags;
      cost += (cost.empty() ? "" : "; ") + c.cost;
      rank += c.cost_rank;
      ++parts;
    }
    return parts;
  }
};

std::vector<AdviceOption> single_changes(const LoadedModel& model, const TrainingPlan& plan,
                                         const Device& device, const std::vector<Change>& changes) {
  std::vector<AdviceOption> out;
  for (const Change& c : changes) {
    TrainingPlan p = plan;
    c.apply(p);
    if (validate(p)) continue;
    out.push_back(price(model, p, device, c.change, c.flags, c.cost, c.cost_rank, 1));
  }
  shape_changes(model, plan, device, "", "", "", 0, 0, out);
  return out;
}

// The minimal combinations that fit: every combination is judged, and one is kept when it fits
// and dropping any one of its changes does not. When none fits, the strongest stack (less the
// changes that barely help) gets a batch or sequence change on top.
std::vector<AdviceOption> combined_changes(const LoadedModel& model, const TrainingPlan& plan,
                                           const Device& device, const Combinations& c,
                                           std::int64_t now_peak) {
  std::vector<int> fits_at(c.total, 0);  // 1 fits, 0 not, -1 invalid
  std::vector<std::int64_t> peak_at(c.total, now_peak);
  std::vector<AdviceOption> out;
  std::size_t strongest = 0;
  std::int64_t strongest_peak = now_peak;
  for (std::size_t code = 1; code < c.total; ++code) {
    TrainingPlan p = plan;
    std::string change, flags, cost;
    int rank = 0;
    const int parts = c.describe(code, change, flags, cost, rank, p);
    if (validate(p)) {
      fits_at[code] = -1;
      continue;
    }
    const Fit f = judge(model, p, device);
    fits_at[code] = f.fits ? 1 : 0;
    peak_at[code] = f.peak_bytes;
    if (f.peak_bytes < strongest_peak) {
      strongest_peak = f.peak_bytes;
      strongest = code;
    }
    if (fits_at[code] != 1 || parts < 2) continue;
    // Minimal: dropping any one change (a smaller code, already judged) no longer fits.
    bool minimal = true;
    const auto d = c.digits_of(code);
    std::size_t place = 1;
    for (std::size_t k = 0; k < c.knobs.size() && minimal; ++k) {
      if (d[k] != 0 && fits_at[code - d[k] * place] == 1) minimal = false;
      place *= c.radix[k];
    }
    if (minimal) out.push_back(price(model, p, device, change, flags, cost, rank, parts));
  }
  if (!out.empty() || strongest == 0 || strongest_peak <= device.usable_bytes()) return out;
  // Drop changes that barely help (under 2% of the usable memory) from the strongest stack.
  const std::int64_t slack = device.usable_bytes() / 50;
  std::size_t place = 1;
  for (std::size_t k = 0; k < c.knobs.size(); ++k) {
    const std::size_t digit = (strongest / place) % c.radix[k];
    const std::size_t without = strongest - digit * place;
    if (digit != 0 && without != 0 && fits_at[without] != -1 &&
        peak_at[without] <= strongest_peak + slack) {
      strongest = without;
    }
    place *= c.radix[k];
  }
  TrainingPlan p = plan;
  std::string change, flags, cost;
  int rank = 0;
  const int parts = c.describe(strongest, change, flags, cost, rank, p);
  shape_changes(model, p, device, change, flags, cost, rank, parts, out);
  return out;
}

// Options that lower the figure, fitting ones first (cheapest first), then the rest (most helpful
// first).
std::vector<AdviceOption> ranked(std::vector<AdviceOption> all, std::int64_t now_peak) {
  std::erase_if(all, [&](const AdviceOption& o) { return o.peak_bytes >= now_peak; });
  std::stable_sort(all.begin(), all.end(), [](const AdviceOption& x, const AdviceOption& y) {
    if (x.fits != y.fits) return x.fits;
    if (x.fits) {
      if (x.cost_rank != y.cost_rank) return x.cost_rank < y.cost_rank;
      return x.peak_bytes < y.peak_bytes;
    }
    return x.peak_bytes < y.peak_bytes;
  });
  return all;
}

}  // namespace

Advice advise(const LoadedModel& model, const TrainingPlan& plan, const Device& device) {
  Advice a;
  a.now = judge(model, plan, device);
  a.fits_now = a.now.fits;
  const std::vector<Change> changes = candidates(plan);
  std::vector<AdviceOption> all = single_changes(model, plan, device, changes);
  for (AdviceOption& o :
       combined_changes(model, plan, device, Combinations(changes), a.now.peak_bytes)) {
    all.push_back(std::move(o));
  }
  a.options = ranked(std::move(all), a.now.peak_bytes);
  return a;
}

}  // namespace trainmem

#include "trainmem/solve.h"

#include <fmt/format.h>

#include <algorithm>

#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"
#include "util/checked.h"

namespace trainmem {
namespace {

constexpr std::int64_t kBatchLimit = std::int64_t{1} << 20;  // validate()'s ranges
constexpr std::int64_t kSeqLimit = std::int64_t{1} << 24;

bool computes_in_bf16(const TrainingPlan& p) {
  return p.precision == Precision::bf16_mixed || p.precision == Precision::bf16 ||
         p.precision == Precision::autocast_bf16;
}

// Largest multiple of `step` in [step, limit] that fits by judge() (the device total on CUDA
// cards, as `trainmem estimate` judges), by doubling then bisection. The invariant lo fits, hi
// does not, makes the answer exact even where the figure is not monotone.
SolveResult search(const LoadedModel& model, TrainingPlan plan, std::int64_t TrainingPlan::*field,
                   const Device& device, std::int64_t step, std::int64_t limit, SolveFor target) {
  SolveResult r;
  r.target = target;
  r.usable_bytes = device.usable_bytes();
  auto fit_at = [&](std::int64_t units) {
    plan.*field = units * step;
    ++r.evaluations;
    Fit f = judge(model, plan, device);
    r.figure = f.figure;
    return f;
  };
  const std::int64_t max_units = limit / step;
  std::int64_t lo = 1;
  Fit lo_fit = fit_at(1);
  if (!lo_fit.fits) {
    r.answer = 0;
    r.next = step;
    r.peak_bytes = lo_fit.peak_bytes;
    r.next_peak_bytes = lo_fit.peak_bytes;
    return r;
  }
  std::int64_t hi = 0;
  std::int64_t hi_peak = 0;
  const auto probe_at = [&](std::int64_t units) {
    const Fit f = fit_at(units);
    if (f.fits) {
      lo = units;
      lo_fit = f;
    } else {
      hi = units;
      hi_peak = f.peak_bytes;
    }
  };
  while (hi == 0) {
    const std::int64_t probe = std::min(lo * 2, max_units);
    if (probe == lo) break;  // at the limit and still fitting
    probe_at(probe);
  }
  r.found = true;
  r.peak_bytes = lo_fit.peak_bytes;
  if (hi == 0) {
    r.limit_reached = true;
    r.answer = lo * step;
    r.next = r.answer;
    r.next_peak_bytes = lo_fit.peak_bytes;
    return r;
  }
  while (hi - lo > 1) probe_at(lo + (hi - lo) / 2);
  r.answer = lo * step;
  r.next = hi * step;
  r.peak_bytes = lo_fit.peak_bytes;
  r.next_peak_bytes = hi_peak;
  return r;
}

}  // namespace

std::string_view name_of(SolveFor f) {
  switch (f) {
    case SolveFor::max_batch:
      return "max-batch";
    case SolveFor::max_seq:
      return "max-seq";
    case SolveFor::smallest_gpu:
      return "smallest-gpu";
    case SolveFor::smallest_tier:
      return "smallest-tier";
  }
  return "max-batch";
}

std::optional<SolveFor> parse_solve_for(std::string_view s) {
  for (SolveFor f :
       {SolveFor::max_batch, SolveFor::max_seq, SolveFor::smallest_gpu, SolveFor::smallest_tier}) {
    if (s == name_of(f)) return f;
  }
  return std::nullopt;
}

std::int64_t default_solve_step(SolveFor target) {
  return target == SolveFor::max_seq ? 64 : 1;
}

Result<SolveResult> solve(const LoadedModel& model, const TrainingPlan& plan,
                          const std::optional<Device>& device, SolveFor target,
                          const SolveOptions& options) {
  if (options.step < 1) return bad_input("", "step", "must be at least 1");
  if (target == SolveFor::max_batch || target == SolveFor::max_seq) {
    if (!device) {
      return bad_input("", "device", fmt::format("{} needs a device to fit", name_of(target)));
    }
    const bool batch = target == SolveFor::max_batch;
    // A sequence is capped at the model's context: positions past max_position_embeddings were
    // never trained, so a longer answer would not be a usable max_length.
    const std::int64_t context = model.spec.max_positions;
    const std::int64_t limit =
        batch ? kBatchLimit : (context > 0 ? std::min(kSeqLimit, context) : kSeqLimit);
    if (options.step > limit) {
      return Error{ErrorCode::usage, "", "--step",
                   fmt::format("must be between 1 and {} (the largest {} priced), got {}", limit,
                               batch ? "batch" : "sequence", options.step)};
    }
    if (device->usable_bytes() <= 0) {
      return Error{ErrorCode::usage, "", "--reserve", "leaves no usable memory on the device"};
    }
    SolveResult r = search(model, plan, batch ? &TrainingPlan::batch : &TrainingPlan::seq, *device,
                           options.step, limit, target);
    r.device = device;
    r.notes.push_back(
        device->reserve_bytes > 0
            ? fmt::format("headroom kept free: {} ({}); --reserve changes it",
                          format_bytes(device->reserve_bytes, Unit::gib),
                          device->reserve_rule.empty() ? "--reserve" : device->reserve_rule)
            : "no headroom kept free: the answer may use every byte; --reserve 2GB keeps some");
    if (!r.found) {
      r.notes.push_back(fmt::format("nothing fits: at {} {} the {} is {} against {} usable",
                                    batch ? "batch" : "seq", options.step, r.figure,
                                    format_bytes(r.peak_bytes, Unit::gib),
                                    format_bytes(r.usable_bytes, Unit::gib)));
    }
    if (r.limit_reached) {
      r.notes.push_back(!batch && context > 0 && limit == context
                            ? fmt::format("capped at the model's context (max_position_embeddings "
                                          "{}), which still fits",
                                          context)
                            : std::string("stopped at the engine's limit, which still fits"));
    }
    return r;
  }

  // smallest-gpu / smallest-tier: the ledger is the same on every device; the device total is
  // not (the CUDA context depends on the card), so each candidate is judged in turn.
  SolveResult r;
  r.target = target;
  const Ledger ledger = estimate(model, plan);
  r.peak_bytes = totals(ledger).peak_bytes;
  r.next_peak_bytes = r.peak_bytes;
  r.evaluations = 1;
  const DeviceKind kind = target == SolveFor::smallest_gpu ? DeviceKind::gpu : DeviceKind::tier;
  const bool skip_emulated =
      kind == DeviceKind::gpu && options.require_native_bf16 && computes_in_bf16(plan);
  std::vector<Device> candidates;
  for (Device d : list_devices()) {
    if (d.kind != kind) continue;
    if (skip_emulated && !d.bf16) continue;
    if (options.reserve_bytes) d.reserve_bytes = *options.reserve_bytes;
    if (d.usable_bytes() <= 0) continue;  // a reserve past the device's memory leaves nothing
    candidates.push_back(std::move(d));
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Device& a, const Device& b) {
    return a.usable_bytes() < b.usable_bytes();
  });
  if (skip_emulated) {
    r.notes.push_back(
        "GPUs without native bf16 (compute capability < 8.0) were skipped; plan in fp16 or fp32 "
        "to consider them");
  }
  for (const Device& d : candidates) {
    auto f = judge(model, plan, ledger, d, gpu_options_for(d, plan));
    if (!f) return f.error();
    r.figure = f->figure;
    if (f->fits) {
      r.found = true;
      r.device = d;
      r.usable_bytes = d.usable_bytes();
      r.peak_bytes = f->peak_bytes;
      break;
    }
    r.next_smaller = d;
    r.next_peak_bytes = f->peak_bytes;
  }
  if (!r.found) {
    r.notes.push_back(fmt::format("no {} in the database holds a {} of {}",
                                  kind == DeviceKind::gpu ? "GPU" : "tier", r.figure,
                                  format_bytes(r.next_peak_bytes, Unit::gib)));
  }
  return r;
}

}  // namespace trainmem

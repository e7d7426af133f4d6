// The advice a dataset adds (include/trainmem/import.h): truncating at the p95, and the records
// each shorter-sequence option truncates.
#include <fmt/format.h>

#include <algorithm>

#include "trainmem/import.h"
#include "trainmem/solve.h"

namespace trainmem {
namespace {

// Truncating at the p95 as an option, placed among the others by fit and cost.
void add_truncation(const DatasetFit& d, const TrainingPlan& plan, Advice& adv) {
  if (!d.p95_truncated_records) return;
  for (const DatasetRow& r : d.rows) {
    if (r.at != "p95" || !r.price.fit || r.price.peak_bytes >= adv.now.peak_bytes) continue;
    AdviceOption o;
    o.change = fmt::format("max_length {} (the dataset's p95)", r.seq);
    o.flags = fmt::format("--seq {}", r.seq);
    o.plan = plan;
    o.plan.seq = r.seq;
    o.peak_bytes = r.price.peak_bytes;
    o.fits = r.price.fit->fits;
    o.margin_bytes = r.price.fit->margin_bytes;
    o.cost = fmt::format(
        "truncates {} of {} records ({:.1f}%): their tails are not trained on",
        *d.p95_truncated_records, d.records,
        100.0 * static_cast<double>(*d.p95_truncated_records) / static_cast<double>(d.records));
    o.cost_rank = 5;
    auto at = std::find_if(adv.options.begin(), adv.options.end(), [&](const AdviceOption& x) {
      return o.fits ? (!x.fits || x.cost_rank > o.cost_rank)
                    : (!x.fits && x.peak_bytes > o.peak_bytes);
    });
    adv.options.insert(at, o);
  }
}

// The records each shorter-sequence option truncates, in its cost.
void add_truncated_records(const DatasetFit& d, std::int64_t seq, Advice& adv) {
  for (AdviceOption& o : adv.options) {
    if (o.plan.seq >= seq || o.cost.find("records (") != std::string::npos) continue;
    const std::int64_t cut = records_longer_than(d.lengths, o.plan.seq);
    o.cost +=
        fmt::format("; with this dataset it truncates {} of {} records ({:.1f}%)", cut, d.records,
                    100.0 * static_cast<double>(cut) / static_cast<double>(d.records));
  }
}

}  // namespace

void add_dataset_options(const DatasetFit& d, const TrainingPlan& plan, Advice& adv) {
  add_truncation(d, plan, adv);
  add_truncated_records(d, plan.seq, adv);
}

}  // namespace trainmem

// advise()'s options beyond one GPU (trainmem/distributed.h add_layout_options).
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "trainmem/distributed.h"
#include "trainmem/solve.h"

namespace trainmem {

void add_layout_options(const LoadedModel& model, const TrainingPlan& plan, const Device& device,
                        Advice& advice) {
  // mlx-lm trains on one Apple machine: no DeepSpeed, no FSDP.
  if (advice.fits_now || !is_single_device(plan.layout) || plan.behaviour.unified_memory) return;
  const LayoutPricer pricer(model, plan);
  Layout z3;
  z3.engine = Engine::deepspeed;
  z3.zero_stage = 3;
  Layout fsdp;
  fsdp.engine = Engine::fsdp;
  std::vector<AdviceOption> extra;
  for (const auto& [shape, cost] :
       {std::pair{z3, "more GPUs; ZeRO-3 moves 1.5x DDP's bytes per step (ZeRO paper)"},
        std::pair{fsdp, "more GPUs; FULL_SHARD re-gathers every block in backward (1.5x DDP)"}}) {
    // Judged like every other option: the most-loaded rank's device total.
    const auto c = min_gpus_judged(model, plan, pricer, device, shape, 512, 8);
    if (!c || world_size(c->layout) < 2) continue;
    AdviceOption o;
    o.change = fmt::format("more GPUs: {}", describe(c->layout));
    o.flags = fmt::format("--gpus {}{} {}", c->layout.gpus_per_node,
                          c->layout.nodes > 1 ? fmt::format(" --nodes {}", c->layout.nodes) : "",
                          shape.engine == Engine::deepspeed ? "--zero 3" : "--fsdp full");
    o.plan = plan;
    o.plan.layout = c->layout;
    o.peak_bytes = c->fit.peak_bytes;
    o.fits = true;
    o.margin_bytes = c->fit.margin_bytes;
    o.cost = cost;
    o.cost_rank = 100;
    extra.push_back(o);
  }
  auto first_miss = std::find_if(advice.options.begin(), advice.options.end(),
                                 [](const AdviceOption& o) { return !o.fits; });
  advice.options.insert(first_miss, extra.begin(), extra.end());
}

}  // namespace trainmem

// Layout search throughput: issue 10 asks for >= 10^5 layouts priced per second on one core.
// items_per_second below counts layouts (enumerated, validated against the model, priced for the
// most-loaded rank and the host, ranked) — docs/distributed.md quotes the figures.
#include <benchmark/benchmark.h>

#include "layout/search.h"
#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/model.h"

namespace {

using namespace trainmem;

void BM_SearchLayouts(benchmark::State& state, const char* preset) {
  const LoadedModel model = load_preset(preset).value();
  TrainingPlan plan;
  plan.seq = 4096;
  plan.grad_accum = 8;
  plan.checkpointing = Checkpointing::full;
  const LayoutPricer pricer(model, plan);
  const Device device = find_device("h100").value();
  SearchSpace space;
  space.max_gpus = 64;
  std::int64_t layouts = 0;
  for (auto _ : state) {
    const SearchResult r = search_layouts(model, plan, pricer, device, space);
    layouts += r.searched;
    benchmark::DoNotOptimize(r.fitting.data());
  }
  state.SetItemsProcessed(layouts);
}
BENCHMARK_CAPTURE(BM_SearchLayouts, llama_3_1_70b, "llama-3.1-70b");
BENCHMARK_CAPTURE(BM_SearchLayouts, qwen3_30b_a3b, "qwen3-30b-a3b");

// Pricing alone (no enumeration): one layout of each engine in turn.
void BM_PriceLayout(benchmark::State& state) {
  const LoadedModel model = load_preset("llama-3.1-70b").value();
  TrainingPlan plan;
  plan.grad_accum = 8;
  const LayoutPricer pricer(model, plan);
  const std::vector<Layout> layouts = enumerate_layouts(model.spec, SearchSpace{});
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pricer.price(layouts[i]));
    i = (i + 1) % layouts.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PriceLayout);

}  // namespace

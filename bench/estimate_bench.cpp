// Microbenchmarks of the engine's hot paths: what one `trainmem estimate` does after start-up.
#include <benchmark/benchmark.h>

#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/render.h"

namespace {

using namespace trainmem;

void BM_LoadPreset(benchmark::State& state) {
  for (auto _ : state) {
    auto model = load_preset("qwen3-8b");
    benchmark::DoNotOptimize(model);
  }
}
BENCHMARK(BM_LoadPreset);

void BM_Estimate(benchmark::State& state, const char* preset, Method method) {
  auto model = load_preset(preset);
  TrainingPlan plan;
  plan.method = method;
  plan.batch = 4;
  for (auto _ : state) {
    Ledger ledger = estimate(model.value(), plan);
    benchmark::DoNotOptimize(totals(ledger));
  }
}
BENCHMARK_CAPTURE(BM_Estimate, qwen3_8b_full, "qwen3-8b", Method::full);
BENCHMARK_CAPTURE(BM_Estimate, qwen3_8b_lora, "qwen3-8b", Method::lora);
BENCHMARK_CAPTURE(BM_Estimate, deepseek_v3_qlora, "deepseek-v3", Method::qlora);

void BM_EstimateAndRenderJson(benchmark::State& state) {
  auto model = load_preset("qwen3-30b-a3b");
  TrainingPlan plan;
  for (auto _ : state) {
    benchmark::DoNotOptimize(render_json(estimate(model.value(), plan), nullptr));
  }
}
BENCHMARK(BM_EstimateAndRenderJson);

// The GPU figures: the step's allocation events replayed through the caching allocator model.
void BM_GpuEstimate(benchmark::State& state, const char* preset, Method method) {
  auto model = load_preset(preset);
  TrainingPlan plan;
  plan.method = method;
  plan.batch = 4;
  const Ledger ledger = estimate(model.value(), plan);
  for (auto _ : state) {
    auto gpu = gpu_estimate(model.value(), plan, ledger, GpuOptions{});
    benchmark::DoNotOptimize(gpu);
  }
}
BENCHMARK_CAPTURE(BM_GpuEstimate, qwen3_8b_full, "qwen3-8b", Method::full);
BENCHMARK_CAPTURE(BM_GpuEstimate, qwen3_8b_lora, "qwen3-8b", Method::lora);
BENCHMARK_CAPTURE(BM_GpuEstimate, qwen3_30b_a3b_qlora, "qwen3-30b-a3b", Method::qlora);

}  // namespace

BENCHMARK_MAIN();

// The caching allocator model on the stream of a growing KV cache: what transformers'
// DynamicCache does in generate(), `torch.cat([keys, new])` per layer and token, the new tensor
// allocated while the old one is live. The shape is validation/kv_growth_probe.py's (Llama-3.2-3B's
// cache: 28 layers, K and V, 8 KV heads of 128, bf16; batch 50 as PEFT's MetaMathQA evaluation;
// a 150-token prompt). The cache alone: the probe measured 4.01 GiB reserved at 100 new tokens
// where this stream gives 7.01, since generate()'s prefill temporaries leave segments the cache
// reuses (its traced stream replays to 3.98 GiB: docs/accuracy.md, "A growing KV cache"). Counters:
// the cache's final size, and the replay's peak allocated and reserved, in GiB.
#include <benchmark/benchmark.h>

#include <vector>

#include "gpu/caching_allocator.h"

namespace {

using namespace trainmem::gpu;

constexpr int kTensors = 28 * 2;                              // K and V of each layer
constexpr std::int64_t kBytesPerPosition = 50 * 8 * 128 * 2;  // batch x KV heads x head dim x bf16
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::vector<AllocEvent> growth_stream(int prompt, int generated) {
  std::vector<AllocEvent> events;
  std::vector<std::int32_t> live(kTensors);
  std::int32_t next = 0;
  for (auto& id : live) {  // the prefill writes every layer's cache at the prompt's length
    events.push_back({Op::alloc, 0, 0, -1, next, 1, kBytesPerPosition * prompt});
    id = next++;
  }
  for (int n = prompt + 1; n <= prompt + generated; ++n) {
    for (auto& id : live) {
      events.push_back({Op::alloc, 0, 0, -1, next, 1, kBytesPerPosition * n});
      events.push_back({Op::free, 0, 0, -1, id, 1, 0});
      id = next++;
    }
  }
  return events;
}

void BM_ReplayKvCacheGrowth(benchmark::State& state, const char* alloc_conf) {
  const int prompt = 150;
  const int generated = static_cast<int>(state.range(0));
  const std::vector<AllocEvent> events = growth_stream(prompt, generated);
  const AllocatorConfig config = parse_alloc_conf(alloc_conf).value();
  ReplayResult result;
  for (auto _ : state) {
    result = replay(events, config, {}, 1, /*fast=*/false);
    benchmark::DoNotOptimize(result);
  }
  state.counters["cache_GiB"] = kTensors * kBytesPerPosition * (prompt + generated) / kGiB;
  state.counters["allocated_GiB"] = static_cast<double>(result.peak_allocated_bytes) / kGiB;
  state.counters["reserved_GiB"] = static_cast<double>(result.peak_reserved_bytes) / kGiB;
}
BENCHMARK_CAPTURE(BM_ReplayKvCacheGrowth, fixed_segments, "")->Arg(100)->Arg(300);
BENCHMARK_CAPTURE(BM_ReplayKvCacheGrowth, expandable_segments, "expandable_segments:True")
    ->Arg(100)
    ->Arg(300);

}  // namespace

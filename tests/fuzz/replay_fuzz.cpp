// libFuzzer target for the GPU replay: fuzzed bytes choose a small model, a plan with framework
// behaviour, a device, an allocator configuration and a run of step lengths; the estimate's event
// stream is replayed through the caching-allocator model (gpu_estimate, with the run of
// run_events). Invariants: the figures are ordered as PyTorch's are (allocated <= reserved <=
// device total, per phase and at the peak; the run's too) and non-negative, and the device total
// covers the run's. Models are small (the replay is per tensor) so that the target runs thousands
// of plans a minute; estimate_fuzz covers the sizes up to the limits.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_invariants.h"
#include "fuzz_plan.h"
#include "trainmem/model.h"

namespace {

// The allocator settings a user writes (each parses; malformed ones are alloc_conf's tests).
constexpr const char* kAllocConfs[] = {
    "",
    "expandable_segments:True",
    "max_split_size_mb:128",
    "garbage_collection_threshold:0.6,max_split_size_mb:64",
    "roundup_power2_divisions:4",
    "expandable_segments:True,roundup_power2_divisions:[256:1,512:2,>:8]",
    "large_segment_size_mb:64,max_split_size_mb:64,max_non_split_rounding_mb:96",
    "expandable_segments:True,large_segment_size_mb:32",
};
constexpr const char* kDevices[] = {"", "7.0", "8.0", "8.6", "8.9", "9.0", "10.0"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainmem;
  FuzzedDataProvider in(data, size);
  ModelSpec s;
  s.name = "fuzz";
  s.model_type = "llama";
  s.heads = in.ConsumeIntegralInRange<std::int64_t>(1, 32);
  s.kv_heads = in.ConsumeBool() ? s.heads : 1;
  s.head_dim = in.ConsumeIntegralInRange<std::int64_t>(1, 256);
  s.hidden = in.ConsumeIntegralInRange<std::int64_t>(1, 8192);
  s.intermediate = in.ConsumeIntegralInRange<std::int64_t>(1, 32768);
  s.vocab = in.ConsumeIntegralInRange<std::int64_t>(1, 262144);
  s.layers = in.ConsumeIntegralInRange<std::int64_t>(1, 48);
  s.max_positions = 1 << 20;
  s.tied_embeddings = in.ConsumeBool();
  if (in.ConsumeBool()) {
    s.moe.experts = in.ConsumeIntegralInRange<std::int64_t>(1, 16);
    s.moe.top_k = in.ConsumeIntegralInRange<std::int64_t>(1, s.moe.experts);
    s.moe.expert_intermediate = in.ConsumeIntegralInRange<std::int64_t>(1, 8192);
    s.moe.shared_experts = in.ConsumeIntegralInRange<std::int64_t>(0, 2);
    s.moe.shared_intermediate = in.ConsumeIntegralInRange<std::int64_t>(1, 8192);
  }
  TrainingPlan p;
  fuzz::consume_plan_kinds(in, p);
  p.batch = in.ConsumeIntegralInRange<std::int64_t>(1, 64);
  p.seq = in.ConsumeIntegralInRange<std::int64_t>(1, 8192);
  p.grad_accum = in.ConsumeIntegralInRange<std::int64_t>(1, 8);
  p.lora.rank = in.ConsumeIntegralInRange<std::int64_t>(1, 256);
  p.lora.dropout = in.ConsumeBool() ? 0.1 : 0.0;
  FrameworkBehaviour& b = p.behaviour;
  b.outputs_kept = in.ConsumeBool();
  b.bnb_saves_4bit_input = in.ConsumeBool();
  b.quantises_lm_head = in.ConsumeBool();
  b.fused_qkv_attention = in.ConsumeBool();
  b.padding_mask = in.ConsumeBool();
  b.optimizer_in_backward = in.ConsumeBool();
  b.offload_checkpoints = in.ConsumeBool();
  b.compiled_loss = in.ConsumeBool();
  b.eval_between_steps = in.ConsumeBool();
  b.generates_sample = in.ConsumeBool();
  b.load_quantiser = static_cast<LoadQuantiser>(in.ConsumeIntegralInRange<int>(0, 3));
  b.loss_chunk_positions = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int64_t>(1, 512) : 0;

  GpuOptions o;
  o.alloc_conf = in.PickValueInArray(kAllocConfs);
  o.compute_capability = in.PickValueInArray(kDevices);
  if (in.ConsumeBool()) o.usable_bytes = in.ConsumeIntegralInRange<std::int64_t>(1, 1LL << 40);
  const int steps = in.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < steps; ++i) {
    o.step_lengths.push_back(in.ConsumeIntegralInRange<std::int64_t>(1, p.seq));
  }
  // Read last, so the committed seeds decode as before: the output's DynamicCache, replayed with
  // the held split when the output is kept.
  b.kv_cache_in_output = in.ConsumeBool();

  const LoadedModel model = model_from_spec(s, SourceKind::preset, "fuzz");
  if (validate(p) || check_plan_size(model, p)) return 0;
  const Ledger ledger = estimate(model, p);
  const Result<GpuEstimate> g = gpu_estimate(model, p, ledger, o);
  if (!g) return 0;
  if (!g->available) return 0;
  auto ordered = [](std::int64_t a, std::int64_t r, std::int64_t d) {
    return a >= 0 && a <= r && r <= d;
  };
  if (!ordered(g->peak_allocated_bytes, g->peak_reserved_bytes, g->device_total_bytes)) {
    __builtin_trap();
  }
  for (const GpuPhase& ph : g->phases) {
    if (!ordered(ph.allocated_bytes, ph.reserved_bytes, ph.device_total_bytes)) __builtin_trap();
    if (ph.largest_free_bytes < 0 || ph.largest_free_bytes > ph.reserved_bytes) __builtin_trap();
  }
  if (g->run_steps > 0) {
    if (!ordered(g->run_peak_allocated_bytes, g->run_peak_reserved_bytes,
                 g->run_device_total_bytes)) {
      __builtin_trap();
    }
    if (g->device_total_bytes < g->run_device_total_bytes) __builtin_trap();
  }
  return 0;
}

// End-to-end libFuzzer target: fuzzed bytes choose a model's dimensions (up to 2^52 each, up to
// the layer cap) and a whole plan; the estimate must keep the invariants of issue 14 point 1
// (fuzz_invariants.h): exact non-negative figures, or an up-front refusal that never fits.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "fuzz_invariants.h"
#include "fuzz_plan.h"
#include "trainmem/model.h"

namespace {

std::int64_t dim(FuzzedDataProvider& in, std::int64_t max) {
  // Mostly small powers of two and their neighbours, sometimes anything up to max.
  if (in.ConsumeBool()) {
    const int bits = in.ConsumeIntegralInRange<int>(0, 52);
    // config.json dimensions are positive (ConfigReader::count), so never 0 here.
    return std::clamp<std::int64_t>(
        (std::int64_t{1} << bits) + in.ConsumeIntegralInRange<std::int64_t>(-1, 1), 1, max);
  }
  return in.ConsumeIntegralInRange<std::int64_t>(1, max);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainmem;
  FuzzedDataProvider in(data, size);
  ModelSpec s;
  s.name = "fuzz";
  s.model_type = "llama";
  const std::int64_t kMaxDim = kMaxFigureElements;
  s.heads = std::max<std::int64_t>(1, dim(in, 1 << 12));
  s.kv_heads = s.heads;
  s.head_dim = std::max<std::int64_t>(1, dim(in, 1 << 16));
  s.hidden = dim(in, kMaxDim);
  s.intermediate = dim(in, kMaxDim);
  s.vocab = dim(in, kMaxDim);
  s.layers = in.ConsumeIntegralInRange<std::int64_t>(1, kMaxLayers);
  s.max_positions = 1024;
  s.tied_embeddings = in.ConsumeBool();
  s.qk_norm = in.PickValueInArray(
      {QkNorm::none, QkNorm::per_head, QkNorm::per_head_weights, QkNorm::full_width});
  if (in.ConsumeBool()) {
    s.moe.experts = in.ConsumeIntegralInRange<std::int64_t>(1, kMaxExperts);
    s.moe.top_k = in.ConsumeIntegralInRange<std::int64_t>(1, s.moe.experts);
    s.moe.expert_intermediate = dim(in, kMaxDim);
    s.moe.shared_experts = in.ConsumeIntegralInRange<std::int64_t>(0, 4);
    s.moe.shared_intermediate = dim(in, kMaxDim);
  }
  TrainingPlan p;
  fuzz::consume_plan_kinds(in, p);
  p.convention = static_cast<Convention>(in.ConsumeIntegralInRange<int>(0, 1));
  p.batch = dim(in, std::int64_t{1} << 20);
  p.seq = dim(in, std::int64_t{1} << 24);
  p.grad_accum = in.ConsumeIntegralInRange<std::int64_t>(1, 64);
  p.lora.rank = in.ConsumeIntegralInRange<std::int64_t>(1, 65536);
  p.lora.dropout = in.ConsumeBool() ? 0.1 : 0.0;
  if (in.ConsumeBool()) p.params_override = in.ConsumeIntegralInRange<std::int64_t>(1, INT64_MAX);
  // Framework behaviour that adds lines of its own (held 4-bit inputs, kept outputs); read last,
  // so the committed seeds still decode as before (an exhausted provider gives false).
  p.behaviour.bnb_saves_4bit_input = in.ConsumeBool();
  p.behaviour.outputs_kept = in.ConsumeBool();
  p.behaviour.quantises_lm_head = in.ConsumeBool();
  p.behaviour.kv_cache_in_output = in.ConsumeBool();  // the output's DynamicCache lines
  const LoadedModel model = model_from_spec(s, SourceKind::preset, "fuzz");
  fuzz::check_invariants(model, p);
  return 0;
}

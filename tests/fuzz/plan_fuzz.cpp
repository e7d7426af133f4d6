// libFuzzer target for plan JSON (plan_from_json: the Python package's and a plan file's way in).
// A plan that reads must write and read back to the same JSON (the round trip of docs/formats.md),
// and price a small model within the invariants of fuzz_invariants.h.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_invariants.h"
#include "trainmem/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainmem;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto plan = plan_from_json(text, "fuzz.json");
  if (!plan.ok()) {
    if (plan.error().message().empty()) __builtin_trap();  // every refusal says why
    return 0;
  }
  const std::string written = render_plan_json(*plan);
  auto back = plan_from_json(written, "written.json");
  if (!back.ok() || render_plan_json(*back) != written) __builtin_trap();
  static const LoadedModel model = [] {
    ModelSpec s;
    s.name = "fuzz";
    s.model_type = "llama";
    s.heads = 4;
    s.kv_heads = 2;
    s.head_dim = 16;
    s.hidden = 64;
    s.intermediate = 128;
    s.vocab = 512;
    s.layers = 2;
    s.max_positions = 1024;
    return model_from_spec(s, SourceKind::preset, "fuzz");
  }();
  fuzz::check_invariants(model, *plan);
  return 0;
}

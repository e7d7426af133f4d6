// Weights tenant: every parameter as stored, trainable and frozen on separate lines.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "ledger/context.h"
#include "ledger/format.h"
#include "trainmem/precision.h"
#include "trainmem/quantisation.h"

namespace trainmem::ledger {
namespace {

// Textbook: the seeds' uniform rates on the priced count. A 4-bit base is a flat 0.55 B/param
// (seed 001: "treat a 4-bit base as roughly 0.55 bytes per parameter").
constexpr double kTextbookFourBitBytes = 0.55;

void add_textbook(const Context& ctx, Items& items) {
  const Dtype dtype = recipe(ctx.plan.precision).weights;
  const bool base_frozen = ctx.plan.method != Method::full;
  if (!base_frozen) {
    items.push_back({Tenant::weights, fmt::format("Weights, {}", dtype_name(dtype)),
                     dense_bytes(dtype, ctx.params_priced), per_param(ctx.params_priced, dtype),
                     "seed 001: bytes per parameter by role", kAllPhases, false});
    return;
  }
  if (ctx.plan.method == Method::qlora) {
    const auto bytes = static_cast<std::int64_t>(
        static_cast<double>(ctx.params_priced) * kTextbookFourBitBytes + 0.5);
    items.push_back({Tenant::weights, "Frozen base weights, 4-bit", bytes,
                     per_param_rate(ctx.params_priced, kTextbookFourBitBytes),
                     "seed 001: a 4-bit base is roughly 0.55 bytes per parameter", kAllPhases,
                     false});
  } else {
    items.push_back({Tenant::weights, fmt::format("Frozen base weights, {}", dtype_name(dtype)),
                     dense_bytes(dtype, ctx.params_priced), per_param(ctx.params_priced, dtype),
                     "seed 001: the frozen base at its storage precision", kAllPhases, false});
  }
}

struct Line {
  std::int64_t params = 0;
  std::int64_t bytes = 0;
};

}  // namespace

void add_weights(const Context& ctx, Items& items) {
  if (ctx.plan.convention == Convention::textbook || ctx.plan.params_override > 0) {
    add_textbook(ctx, items);
    return;
  }
  // One line per (trainable, dtype): e.g. "Weights, bf16 (trainable)" and "Frozen base, nf4".
  std::map<std::tuple<bool, bool, Dtype>, Line> lines;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (g.mtp) continue;
    Line& line = lines[{g.trainable, g.quantised, g.dtype}];
    const std::int64_t n = group_params(g);
    line.params += n;
    line.bytes += g.quantised ? quantised_bytes(ctx.plan.quant, g.shape) * g.multiplicity
                              : dense_bytes(g.dtype, n);
  }
  for (const auto& [key, line] : lines) {
    const auto& [trainable, quantised, dtype] = key;
    std::string label = trainable ? fmt::format("Weights, {} (trainable)", dtype_name(dtype))
                                  : fmt::format("Frozen weights, {}", dtype_name(dtype));
    std::string formula =
        quantised ? quantised_formula(ctx.plan.quant, line.params) : per_param(line.params, dtype);
    items.push_back({Tenant::weights, std::move(label), line.bytes, std::move(formula),
                     quantised ? "bitsandbytes/functional.py quantize_4bit (blockwise absmax)"
                               : "parameter count from the inventory x dtype size",
                     kAllPhases, false});
  }
}

}  // namespace trainmem::ledger

// Weights tenant: every parameter as stored. Trainable base weights, adapters, frozen weights,
// the quantised base and prepare_model_for_kbit_training's fp32 upcast are separate lines.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "ledger/context.h"
#include "ledger/format.h"
#include "model/dtype.h"
#include "plan/method.h"
#include "plan/precision.h"
#include "plan/quantisation.h"
#include "trainmem/render.h"

namespace trainmem::ledger {
namespace {

// Textbook: the seeds' uniform rates on the priced count. A 4-bit base is a flat 0.55 B/param
// (seed 001: "treat a 4-bit base as roughly 0.55 bytes per parameter").
constexpr double kTextbookFourBitBytes = 0.55;

void add_textbook(const Context& ctx, Items& items) {
  const Dtype dtype = recipe(ctx.plan.precision).weights;
  const std::int64_t priced = ctx.params_priced;
  const std::int64_t trainable = ctx.params_trainable;
  switch (ctx.plan.method) {
    case Method::full:
      items.push_back({.id = "weights.textbook",
                       .tenant = Tenant::weights,
                       .label = fmt::format("Weights, {}", dtype_name(dtype)),
                       .bytes = dense_bytes(dtype, priced),
                       .formula = per_param(priced, dtype),
                       .source = "seed 001: bytes per parameter by role",
                       .live = kAllPhases,
                       .estimated = false});
      return;
    case Method::qlora: {
      const auto bytes =
          static_cast<std::int64_t>(static_cast<double>(priced) * kTextbookFourBitBytes + 0.5);
      items.push_back({.id = "weights.textbook_4bit_base",
                       .tenant = Tenant::weights,
                       .label = "Frozen base weights, 4-bit",
                       .bytes = bytes,
                       .formula = per_param_rate(priced, kTextbookFourBitBytes),
                       .source = "seed 001: a 4-bit base is roughly 0.55 bytes per parameter",
                       .live = kAllPhases,
                       .estimated = false});
      break;
    }
    case Method::lora:
      items.push_back({.id = "weights.textbook_frozen_base",
                       .tenant = Tenant::weights,
                       .label = fmt::format("Frozen base weights, {}", dtype_name(dtype)),
                       .bytes = dense_bytes(dtype, priced),
                       .formula = per_param(priced, dtype),
                       .source = "seed 001: the frozen base at its storage precision",
                       .live = kAllPhases,
                       .estimated = false});
      break;
    case Method::freeze: {
      const std::int64_t frozen = priced > trainable ? priced - trainable : 0;
      items.push_back({.id = "weights.textbook_frozen",
                       .tenant = Tenant::weights,
                       .label = fmt::format("Frozen weights, {}", dtype_name(dtype)),
                       .bytes = dense_bytes(dtype, frozen),
                       .formula = per_param(frozen, dtype),
                       .source = "seed 001: frozen weights at their storage precision",
                       .live = kAllPhases,
                       .estimated = false});
      break;
    }
  }
  if (trainable == 0) return;
  const bool adapters = ctx.plan.method == Method::lora || ctx.plan.method == Method::qlora;
  items.push_back(
      {.id = "weights.textbook_trainable",
       .tenant = Tenant::weights,
       .label = fmt::format("{}, {}", adapters ? "Adapter weights" : "Trainable weights",
                            dtype_name(dtype)),
       .bytes = dense_bytes(dtype, trainable),
       .formula = per_param(trainable, dtype),
       .source = adapters ? "seed 001: r x (in + out) per adapted projection, priced as any "
                            "trainable parameter (16 B/param in all under bf16-mixed)"
                          : "seed 001: bytes per parameter by role",
       .live = kAllPhases,
       .estimated = false});
}

enum class Kind { trainable, adapter, frozen, quantised, upcast };

struct Line {
  std::int64_t params = 0;
  std::int64_t bytes = 0;
};

// The line's stable id: "weights.<kind>.<dtype>" ("weights.frozen.bf16").
std::string line_id(Kind kind, Dtype dtype) {
  std::string_view k;
  switch (kind) {
    case Kind::trainable:
      k = "trainable";
      break;
    case Kind::adapter:
      k = "adapter";
      break;
    case Kind::frozen:
      k = "frozen";
      break;
    case Kind::quantised:
      k = "quantised";
      break;
    case Kind::upcast:
      k = "kbit_upcast";
      break;
  }
  return fmt::format("weights.{}.{}", k, dtype_name(dtype));
}

std::string label(Kind kind, Dtype dtype, const QuantPlan& quant) {
  switch (kind) {
    case Kind::trainable:
      return fmt::format("Weights, {} (trainable)", dtype_name(dtype));
    case Kind::adapter:
      return fmt::format("Adapter weights, {} (trainable)", dtype_name(dtype));
    case Kind::frozen:
      return fmt::format("Frozen weights, {}", dtype_name(dtype));
    case Kind::quantised:
      return fmt::format(
          "Frozen base, {}{}", name_of(quant.kind),
          quant.double_quant && quant.kind != QuantKind::int8 ? " (double quant)" : "");
    case Kind::upcast:
      return "prepare_model_for_kbit_training: fp32 upcast of 16-bit params";
  }
  return "";
}

std::string source(Kind kind) {
  switch (kind) {
    case Kind::trainable:
    case Kind::frozen:
      return "parameter count from the inventory x dtype size";
    case Kind::adapter:
      return "peft/tuners/lora/layer.py: lora_A [r, in], lora_B [out, r]; fp32 by "
             "autocast_adapter_dtype=True (peft/tuners/tuners_utils.py)";
    case Kind::quantised:
      return "bitsandbytes/functional.py quantize_4bit (blockwise absmax, compress_statistics)";
    case Kind::upcast:
      return "peft/utils/other.py prepare_model_for_kbit_training: non-Params4bit params to fp32";
  }
  return "";
}

}  // namespace

void add_weights(const Context& ctx, Items& items) {
  if (ctx.plan.convention == Convention::textbook || ctx.plan.params_override > 0) {
    add_textbook(ctx, items);
    return;
  }
  const Dtype loaded = recipe(ctx.plan.precision).weights;
  // QLoRA with prepare_model_for_kbit_training: the 16-bit params were loaded at `loaded` and then
  // upcast; the upcast's extra bytes are their own line so the cost of the step is visible.
  const bool upcast = ctx.plan.method == Method::qlora && ctx.plan.quant.prepare_kbit &&
                      dtype_info(loaded).bits < 32;
  std::map<std::tuple<Kind, Dtype>, Line> lines;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (g.mtp) continue;
    const std::int64_t n = group_params(g);
    if (g.quantised) {
      Line& line = lines[{Kind::quantised, g.dtype}];
      line.params += n;
      line.bytes += quantised_bytes(ctx.plan.quant, g.shape) * g.multiplicity;
      continue;
    }
    if (is_adapter(g)) {
      Line& line = lines[{Kind::adapter, g.dtype}];
      line.params += n;
      line.bytes += dense_bytes(g.dtype, n);
      continue;
    }
    if (g.trainable) {
      Line& line = lines[{Kind::trainable, g.dtype}];
      line.params += n;
      line.bytes += dense_bytes(g.dtype, n);
      continue;
    }
    if (upcast && g.dtype == Dtype::f32) {
      Line& base = lines[{Kind::frozen, loaded}];
      base.params += n;
      base.bytes += dense_bytes(loaded, n);
      Line& extra = lines[{Kind::upcast, Dtype::f32}];
      extra.params += n;
      extra.bytes += dense_bytes(Dtype::f32, n) - dense_bytes(loaded, n);
      continue;
    }
    Line& line = lines[{Kind::frozen, g.dtype}];
    line.params += n;
    line.bytes += dense_bytes(g.dtype, n);
  }
  for (const auto& [key, line] : lines) {
    const auto& [kind, dtype] = key;
    std::string formula;
    if (kind == Kind::quantised) {
      formula = quantised_formula(ctx.plan.quant, line.params);
    } else if (kind == Kind::upcast) {
      formula = fmt::format("{} params x (4 - {}) B", with_commas(line.params),
                            dtype_info(loaded).bits / 8);
    } else {
      formula = per_param(line.params, dtype);
    }
    items.push_back({.id = line_id(kind, dtype),
                     .tenant = Tenant::weights,
                     .label = label(kind, dtype, ctx.plan.quant),
                     .bytes = line.bytes,
                     .formula = std::move(formula),
                     .source = source(kind),
                     .live = kAllPhases,
                     .estimated = false});
  }
}

}  // namespace trainmem::ledger

// check_plan_size(): the plan's largest element figures, in checked arithmetic, against
// kMaxFigureElements (trainmem/plan.h explains the rule).
#include "plan/limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "model/model_spec.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "util/checked.h"

namespace trainmem {
namespace {

struct Figure {
  std::string what;
  std::optional<std::int64_t> elements;  // nullopt: overflowed 64 bits
  std::string field = "";                // the config key behind it, when one is
};

// The config key whose value makes the parameter count what it is: the largest of the
// dimensions a weight is built from.
std::string largest_dimension(const ModelSpec& s) {
  std::pair<std::int64_t, std::string> best{s.vocab, "vocab_size"};
  for (const auto& d : {std::pair{s.hidden, std::string("hidden_size")},
                        std::pair{s.intermediate, std::string("intermediate_size")},
                        std::pair{s.moe.expert_intermediate, std::string("moe_intermediate_size")},
                        std::pair{s.moe.experts, std::string("num_experts")}}) {
    if (d.first > best.first) best = d;
  }
  return fmt::format("{} ({})", best.second, best.first);
}

// The widest per-token tensor a layer can save: the MLP, attention projections, the hidden state
// and the experts' widths routed per token, MLA's latent ranks, the router's logits.
std::optional<std::int64_t> widest(const ModelSpec& s) {
  std::int64_t w = std::max({s.hidden, s.intermediate, s.moe.experts, s.mla_spec.q_lora_rank,
                             s.mla_spec.kv_lora_rank, std::int64_t{1}});
  for (auto v :
       {checked_mul(s.heads, qk_head_dim(s)), checked_mul(s.heads, v_head_dim(s)),
        // each token's hidden state copied once per routed expert (the experts' gate/up input)
        checked_mul(s.hidden, std::max<std::int64_t>(s.moe.top_k, 1)),
        checked_mul(s.kv_heads, s.head_dim),
        checked_mul(s.moe.expert_intermediate, std::max<std::int64_t>(s.moe.top_k, 1)),
        checked_mul(s.moe.shared_intermediate, std::max<std::int64_t>(s.moe.shared_experts, 1))}) {
    if (!v) return std::nullopt;
    w = std::max(w, *v);
  }
  return w;
}

std::optional<std::int64_t> parameters(const ParameterInventory& inv) {
  std::int64_t n = 0;
  for (const TensorGroup& g : inv.groups) {
    std::optional<std::int64_t> e = g.multiplicity;
    for (std::int64_t d : g.shape) e = e ? checked_mul(*e, d) : std::nullopt;
    const auto sum = e ? checked_add(n, *e) : std::nullopt;
    if (!sum) return std::nullopt;
    n = *sum;
  }
  return n;
}

std::vector<Figure> figures(const LoadedModel& model, const TrainingPlan& plan) {
  const ModelSpec& s = model.spec;
  const std::int64_t layers = std::max<std::int64_t>(s.layers + s.mtp_layers, 1);
  const auto tokens = checked_mul(plan.batch, plan.seq);
  const auto width = widest(s);
  std::vector<Figure> out;
  out.push_back({"the parameter count", parameters(model.inventory), largest_dimension(s)});
  if (plan.params_override > 0) out.push_back({"--params", plan.params_override});
  // LoRA adds r x (in + out) per adapted linear: at most 2 r per weight element row and column.
  out.push_back({"rank x 2 x width x layers x 16 linears (LoRA adapters)",
                 checked_product({std::max<std::int64_t>(plan.lora.rank, 1), 2,
                                  std::max(width.value_or(0), s.vocab), layers, 16})});
  out.push_back({"tokens x width x layers (activations)",
                 tokens && width ? checked_product({*tokens, *width, layers}) : std::nullopt});
  // Every adapted linear saves its tokens x rank bottleneck (x A) for backward, so a rank wider
  // than the model (a fuzzed rank 40607 on width 1) sets the activations' size instead.
  if (plan.method == Method::lora || plan.method == Method::qlora) {
    out.push_back(
        {"tokens x rank x layers (LoRA activations)",
         tokens ? checked_product({*tokens, std::max<std::int64_t>(plan.lora.rank, 1), layers})
                : std::nullopt});
  }
  out.push_back({"tokens x vocabulary (logits)",
                 tokens ? checked_mul(*tokens, std::max<std::int64_t>(s.vocab, 1)) : std::nullopt});
  // SDPA with a mask (padding, sliding window) keeps a float copy of a batch x seq x seq mask in
  // every layer (activation_model.cpp attention_output); flash attention keeps none.
  if (plan.attention != Attention::flash) {
    out.push_back({"batch x seq x seq x layers (attention masks)",
                   checked_product({plan.batch, plan.seq, plan.seq, layers})});
  }
  // Eager attention materialises batch x heads x seq x seq scores in every layer.
  if (plan.attention == Attention::eager) {
    out.push_back({"batch x heads x seq x seq x layers (eager attention scores)",
                   checked_product({plan.batch, std::max<std::int64_t>(s.heads, 1), plan.seq,
                                    plan.seq, layers})});
  }
  return out;
}

}  // namespace

std::optional<Error> check_plan_size(const LoadedModel& model, const TrainingPlan& plan) {
  if (model.spec.layers > kMaxLayers) {
    return bad_input(model.source_detail, "num_hidden_layers",
                     fmt::format("{} layers: no published decoder has more than a few hundred "
                                 "(limit {})",
                                 model.spec.layers, kMaxLayers));
  }
  for (const Figure& f : figures(model, plan)) {
    if (!f.elements || *f.elements > kMaxFigureElements) {
      const std::string size =
          f.elements ? fmt::format("{:.3g} elements", static_cast<double>(*f.elements))
                     : std::string("more than 2^63 elements");
      // The parameter count comes from the model's file: name it and its largest dimension.
      const bool from_file = !f.field.empty() && model.source != SourceKind::preset;
      return bad_input(
          from_file ? model.source_detail : "", "",
          fmt::format("this plan is too large to price: {} is {}{}, past the 2^52 (4.5e15) "
                      "limit that keeps every byte count exact in 64 bits (8 EiB)",
                      f.what, size,
                      f.field.empty() ? "" : fmt::format(" (largest dimension: {})", f.field)));
    }
  }
  return std::nullopt;
}

std::optional<Error> check_plan_matches_model(const LoadedModel& model, const TrainingPlan& plan) {
  // A learned position table (GPT-2's wpe) has one row per position: a longer sequence indexes
  // past it and the forward fails (modeling_gpt2.py: self.wpe(position_ids)), with no RoPE to
  // scale. Rotary models price past their context with a note (plan_notes).
  const std::int64_t context = model.spec.max_positions;
  if (model.spec.learned_positions && context > 0 && plan.seq > context) {
    return bad_input("", "--seq",
                     fmt::format("{} is longer than {}'s learned position table (n_positions "
                                 "{}): positions past it do not exist, so the forward fails",
                                 plan.seq, model.spec.name, context));
  }
  for (std::int64_t layer : plan.freeze.train_layers) {
    if (layer >= model.spec.layers) {
      return bad_input("", "--train-layers",
                       fmt::format("layer {} is past the last layer of {} ({} layers: 0-{})", layer,
                                   model.spec.name, model.spec.layers, model.spec.layers - 1));
    }
  }
  return std::nullopt;
}

std::optional<Error> check_plan_for_model(const LoadedModel& model, const TrainingPlan& plan) {
  if (auto e = validate_layout(plan.layout, model.spec)) return e;
  if (auto e = check_plan_matches_model(model, plan)) return e;
  if (auto e = check_plan_size(model, plan)) return e;
  if (auto e = check_checkpoint_quant(model, plan)) return e;
  return check_targets(model, plan);
}

bool plan_size_ok(const LoadedModel& model, const TrainingPlan& plan) {
  return !check_plan_size(model, plan);
}

}  // namespace trainmem

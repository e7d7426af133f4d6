// estimate(): builds the shared context once, then lets each tenant append its lines.
#include "trainmem/estimate.h"

#include <fmt/format.h>

#include "ledger/context.h"
#include "ledger/phases.h"
#include "ledger/run_phases.h"
#include "plan/framework.h"
#include "plan/framework_layers.h"
#include "plan/limits.h"
#include "plan/method.h"
#include "plan/plan.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"
#include "util/checked.h"

namespace trainmem {
namespace {

// The count the textbook rates are applied to: --params, else the published count (the seeds
// price published figures such as 8.2e9), else the exact count.
std::int64_t priced_params(const LoadedModel& model, const TrainingPlan& plan,
                           std::int64_t exact_total) {
  if (plan.params_override > 0) return plan.params_override;
  if (plan.convention == Convention::textbook && model.spec.published_params > 0) {
    return model.spec.published_params;
  }
  return exact_total;
}

ModelSummary summarise(const ledger::Context& ctx) {
  ModelSummary m;
  m.name = ctx.spec.name;
  m.source = std::string(source_kind_name(ctx.model.source));
  m.source_detail = ctx.model.source_detail;
  m.model_type = ctx.spec.model_type;
  m.params_total = ctx.params_total;
  m.params_trainable = ctx.params_trainable;
  m.params_with_adapters = params_total(ctx.inventory);
  m.params_active = params_active(ctx.model.inventory, ctx.spec);
  m.params_mtp = params_mtp(ctx.model.inventory);
  m.params_published = ctx.spec.published_params;
  m.params_priced = ctx.params_priced;
  return m;
}

// "Framework assumptions (litgpt): ..." from the profile rows that applied.
std::string framework_note(const TrainingPlan& plan) {
  std::string versions;
  for (const auto& [lib, v] : plan.library_versions) {
    versions += fmt::format("{}{} {}", versions.empty() ? "; " : ", ", lib, v);
  }
  std::string out = fmt::format("Framework assumptions ({}{}): ", plan.framework, versions);
  const auto applied = applied_differences(plan);
  if (applied.empty()) {
    out += "transformers >= 4.49 loss; PEFT adapters in fp32; bitsandbytes >= 0.43.2.";
  } else {
    for (std::size_t i = 0; i < applied.size(); ++i) {
      out += fmt::format("{}{}", i ? "; " : "", applied[i]->what);
    }
    out += ".";
  }
  const FrameworkBehaviour& b = plan.behaviour;
  out += b.outputs_kept ? " The loop keeps the model output (logits) through the step."
                        : " The model output is dropped before backward (HF Trainer).";
  if (b.padding_mask) out += " Padding mask: SDPA repeats K/V to every head.";
  if (b.kv_cache_in_output) {
    out += plan.checkpointing == Checkpointing::none
               ? " use_cache: the model output carries a DynamicCache of every layer's keys and "
                 "values."
               : " use_cache: gradient checkpointing turns the KV cache off in training.";
  }
  if (b.optimizer_in_backward) out += " The optimizer steps in backward.";
  if (b.compiled_loss) {
    out +=
        " torch.compile: the loss is priced compiled (it saves the logits and two fp32 values per "
        "token, not the fp32 log_softmax).";
  }
  if (b.compiled_layers) {
    out +=
        " Compiled layers: RMSNorms keep their input and rstd, the gated MLP its gate and up "
        "outputs, LoRA one adapter-dtype cast per input (measured on CPU for a Llama layer, "
        "torch 2.5.1); attention, other layer kinds and the other terms are priced as eager.";
  }
  if (b.offload_checkpoints && plan.checkpointing != Checkpointing::full) {
    out +=
        " Activation offloading moves checkpointed layer inputs only: with --checkpointing "
        "none it changes nothing here.";
  }
  if (b.unified_memory) {
    out += " Apple unified memory: the OS and other apps share the same memory.";
  }
  out +=
      " The late-backward phase counts every gradient but the input embedding's, which its "
      "backward makes last.";
  return out;
}

std::vector<std::string> notes(const ledger::Context& ctx) {
  std::vector<std::string> out = ctx.model.notes;
  if (!ctx.spec.estimated_from.empty()) {
    out.push_back(fmt::format(
        "model_type '{}' has no adapter: weights, gradients and optimizer state are priced {}; "
        "activations are ESTIMATED from the closest known layer shape, {}.",
        ctx.spec.model_type,
        ctx.model.source == SourceKind::preset || ctx.model.source == SourceKind::config_file
            ? "from config.json's standard keys in that layer shape (a folder of safetensors "
              "gives the exact tensor list)"
            : "exactly from the safetensors headers",
        ctx.spec.estimated_from));
  }
  if (ctx.plan.convention == Convention::textbook) {
    out.push_back(fmt::format(
        "Textbook convention: uniform bytes per parameter on {} params ({}), as the seeds do.",
        short_count(ctx.params_priced), ctx.plan.params_override > 0 ? "--params" : "published"));
  } else if (ctx.plan.params_override > 0) {
    out.push_back(fmt::format(
        "--params {}: uniform bytes per parameter on that count, with no tensors behind it, so "
        "there is no allocator replay (reserved, device total) and the verdict judges the live "
        "peak.",
        short_count(ctx.params_priced)));
  }
  if (ctx.spec.moe.experts > 0) {
    out.push_back(fmt::format(
        "Mixture of experts: all {} experts per layer are resident, so memory uses the total "
        "count; {} params are active per token.",
        ctx.spec.moe.experts, short_count(params_active(ctx.model.inventory, ctx.spec))));
  }
  if (const std::int64_t mtp = params_mtp(ctx.model.inventory); mtp > 0) {
    out.push_back(fmt::format(
        "The next-token-prediction module ({} params) is not loaded by transformers and is not "
        "priced.",
        short_count(mtp)));
  }
  out.push_back(fmt::format(
      "Activation memory follows the longest sequence in a batch ({} tokens here), not the "
      "average: size against max_length.",
      ctx.plan.seq));
  if (ctx.plan.convention == Convention::exact) {
    out.push_back(framework_note(ctx.plan));
    if (ctx.plan.loss == Loss::chunked) {
      out.push_back(
          "Chunked loss: TRL's chunked_nll (chunks of 256 tokens in fp32 under checkpoint, with "
          "an fp32 copy of a 16-bit lm_head weight per chunk); every shifted token counted as "
          "a label.");
    }
  }
  return out;
}

// mlx-lm adapts the last N layers unless told otherwise (FrameworkBehaviour::lora_last_layers):
// the plan as that framework builds it.
TrainingPlan effective_plan(const LoadedModel& model, const TrainingPlan& plan) {
  TrainingPlan p = plan;
  const std::int64_t n = p.behaviour.lora_last_layers;
  const bool adapters = p.method == Method::lora || p.method == Method::qlora;
  if (adapters && n > 0 && p.freeze.train_layers.empty() && n < model.spec.layers) {
    for (std::int64_t l = model.spec.layers - n; l < model.spec.layers; ++l) {
      p.freeze.train_layers.push_back(l);
    }
  }
  return p;
}

}  // namespace

namespace ledger {

Context make_context(const LoadedModel& model, const TrainingPlan& plan) {
  Context ctx{
      model, plan, framework_layers(model.spec, plan.behaviour), apply_method(model, plan), 0, 0,
      0,     {}};
  ctx.params_total = params_total(model.inventory);
  ctx.params_trainable = params_trainable(ctx.inventory);
  ctx.params_priced = priced_params(model, plan, ctx.params_total);
  ctx.layers = layer_activations(ctx);
  return ctx;
}

}  // namespace ledger

Ledger estimate(const LoadedModel& model, const TrainingPlan& given) {
  const TrainingPlan plan = effective_plan(model, under_convention(given));
  const ledger::Context ctx = ledger::make_context(model, plan);

  Ledger out;
  out.plan = plan;
  ledger::add_weights(ctx, out.items);
  ledger::add_gradients(ctx, out.items);
  ledger::add_optimizer_states(ctx, out.items);
  ledger::add_activations(ctx, out.items);
  ledger::add_logits(ctx, out.items);
  ledger::add_temporaries(ctx, out.items);
  ledger::add_overhead(ctx, out.items);
  ledger::add_run_phases(ctx, out.items);  // load / validation / generation, where they run
  out.model = summarise(ctx);
  out.notes = notes(ctx);
  for (std::string& n : method_notes(model, plan, ctx.inventory)) out.notes.push_back(std::move(n));
  return out;
}

std::int64_t peak_of(const LoadedModel& model, const TrainingPlan& plan) {
  // A candidate past what 64-bit byte counts hold (limits.h) is over every device.
  if (!plan_size_ok(model, plan)) return kSaturated;
  const Totals t = totals(estimate(model, plan));
  return t.overflow ? kSaturated : t.peak_bytes;
}

}  // namespace trainmem

// One name table per plan enum: the CLI, JSON, Python and the web page all spell values this way.
#include "trainmem/plan.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

#include "gpu/caching_allocator.h"
#include "plan/framework.h"
#include "plan/method.h"
#include "plan/plan.h"

namespace trainmem {
namespace {

// The enum value of each canonical name in the vocabulary (vocabulary.cpp holds the names, their
// aliases and meanings; these tables only tie a canonical name to its enum value).
template <class E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<Method, 4> kMethods{{{Method::full, "full"},
                                     {Method::lora, "lora"},
                                     {Method::qlora, "qlora"},
                                     {Method::freeze, "freeze"}}};
constexpr Names<Precision, 6> kPrecisions{{{Precision::autocast_bf16, "bf16-mixed"},
                                           {Precision::bf16, "bf16"},
                                           {Precision::bf16_mixed, "bf16-fp32-master"},
                                           {Precision::autocast_fp16, "fp16-mixed"},
                                           {Precision::fp16_mixed, "fp16-fp32-master"},
                                           {Precision::fp32, "fp32"}}};
constexpr Names<OptimizerKind, 21> kOptimizers{
    {{OptimizerKind::adamw, "adamw"},
     {OptimizerKind::adamw_8bit, "adamw-8bit"},
     {OptimizerKind::paged_adamw, "paged-adamw"},
     {OptimizerKind::paged_adamw_8bit, "paged-adamw-8bit"},
     {OptimizerKind::adafactor, "adafactor"},
     {OptimizerKind::sgd, "sgd"},
     {OptimizerKind::sgd_momentum, "sgd-momentum"},
     {OptimizerKind::lion, "lion"},
     {OptimizerKind::lion_8bit, "lion-8bit"},
     {OptimizerKind::adam_mini, "adam-mini"},
     {OptimizerKind::muon, "muon"},
     {OptimizerKind::adamw_32bit, "adamw-32bit"},
     {OptimizerKind::lion_32bit, "lion-32bit"},
     {OptimizerKind::paged_lion, "paged-lion"},
     {OptimizerKind::paged_lion_8bit, "paged-lion-8bit"},
     {OptimizerKind::rmsprop_32bit, "rmsprop-32bit"},
     {OptimizerKind::rmsprop_8bit, "rmsprop-8bit"},
     {OptimizerKind::ademamix, "ademamix"},
     {OptimizerKind::ademamix_8bit, "ademamix-8bit"},
     {OptimizerKind::paged_ademamix, "paged-ademamix"},
     {OptimizerKind::paged_ademamix_8bit, "paged-ademamix-8bit"}}};
constexpr Names<OptimizerImpl, 3> kImpls{{{OptimizerImpl::foreach, "foreach"},
                                          {OptimizerImpl::fused, "fused"},
                                          {OptimizerImpl::for_loop, "for-loop"}}};
constexpr Names<Checkpointing, 3> kCheckpointing{{{Checkpointing::none, "none"},
                                                  {Checkpointing::full, "full"},
                                                  {Checkpointing::selective, "selective"}}};
constexpr Names<Attention, 3> kAttention{
    {{Attention::eager, "eager"}, {Attention::sdpa, "sdpa"}, {Attention::flash, "flash"}}};
constexpr Names<Loss, 3> kLosses{
    {{Loss::full, "full"}, {Loss::chunked, "chunked"}, {Loss::fused, "fused"}}};
constexpr Names<Convention, 2> kConventions{
    {{Convention::exact, "exact"}, {Convention::textbook, "textbook"}}};
constexpr Names<QuantKind, 3> kQuants{
    {{QuantKind::nf4, "nf4"}, {QuantKind::fp4, "fp4"}, {QuantKind::int8, "int8"}}};
constexpr Names<EvalStrategy, 3> kEvalStrategies{
    {{EvalStrategy::no, "no"}, {EvalStrategy::steps, "steps"}, {EvalStrategy::epoch, "epoch"}}};

// The profiles whose runs go through the Hugging Face Trainer's training loop (hf and the
// profiles built on it), whose evaluation eval_strategy switches on.
bool runs_trainer_evaluate(std::string_view framework) {
  for (const FrameworkProfile& p : framework_profiles()) {
    if (p.name == framework) return p.name == "hf" || p.base == "hf";
  }
  return false;
}

template <class E, std::size_t N>
std::string_view find_name(const Names<E, N>& names, E v) {
  for (const auto& [e, name] : names) {
    if (e == v) return name;
  }
  return "";
}

// Any spelling the vocabulary accepts (aliases included) -> the enum value of its term.
template <class E, std::size_t N>
std::optional<E> find_value(const Names<E, N>& names, const Vocabulary& vocabulary,
                            std::string_view s) {
  const Term* term = find_term(vocabulary, s);
  if (term == nullptr) return std::nullopt;
  for (const auto& [e, name] : names) {
    if (name == term->name) return e;
  }
  return std::nullopt;
}

template <class E, std::size_t N>
Result<E> resolve_value(const Names<E, N>& names, const Vocabulary& vocabulary,
                        std::string_view s) {
  auto term = resolve_term(vocabulary, s);
  if (!term) return term.error();
  for (const auto& [e, name] : names) {
    if (name == term.value()->name) return e;
  }
  return Error{ErrorCode::usage, "", vocabulary.flag, fmt::format("'{}' has no value", s)};
}

// An error about one plan field, named as in the plan's JSON ("lora.rank"); front ends translate
// the name to their own (the command line's --lora-rank).
Error field_error(std::string field, std::string reason) {
  return Error{ErrorCode::bad_input, "", std::move(field), std::move(reason)};
}

}  // namespace

std::string_view name_of(Method v) {
  return find_name(kMethods, v);
}
std::string_view name_of(Precision v) {
  return find_name(kPrecisions, v);
}
std::string_view name_of(OptimizerKind v) {
  return find_name(kOptimizers, v);
}
std::string_view name_of(OptimizerImpl v) {
  return find_name(kImpls, v);
}
std::string_view name_of(Checkpointing v) {
  return find_name(kCheckpointing, v);
}
std::string_view name_of(Attention v) {
  return find_name(kAttention, v);
}
std::string_view name_of(Loss v) {
  return find_name(kLosses, v);
}
std::string_view name_of(Convention v) {
  return find_name(kConventions, v);
}
std::string_view name_of(QuantKind v) {
  return find_name(kQuants, v);
}
std::string_view name_of(EvalStrategy v) {
  return find_name(kEvalStrategies, v);
}

std::optional<Method> parse_method(std::string_view s) {
  return find_value(kMethods, method_vocabulary(), s);
}
std::optional<Precision> parse_precision(std::string_view s) {
  return find_value(kPrecisions, precision_vocabulary(), s);
}
std::optional<OptimizerKind> parse_optimizer(std::string_view s) {
  return find_value(kOptimizers, optimizer_vocabulary(), s);
}
std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view s) {
  return find_value(kImpls, optimizer_impl_vocabulary(), s);
}
std::optional<Checkpointing> parse_checkpointing(std::string_view s) {
  return find_value(kCheckpointing, checkpointing_vocabulary(), s);
}
std::optional<Attention> parse_attention(std::string_view s) {
  return find_value(kAttention, attention_vocabulary(), s);
}
std::optional<Loss> parse_loss(std::string_view s) {
  return find_value(kLosses, loss_vocabulary(), s);
}
std::optional<Convention> parse_convention(std::string_view s) {
  return find_value(kConventions, convention_vocabulary(), s);
}
std::optional<QuantKind> parse_quant(std::string_view s) {
  return find_value(kQuants, quant_vocabulary(), s);
}
std::optional<EvalStrategy> parse_eval_strategy(std::string_view s) {
  return find_value(kEvalStrategies, eval_strategy_vocabulary(), s);
}

TrainingPlan hf_trainer_defaults() {
  // transformers/training_args.py: optim defaults to adamw_torch_fused on torch >= 2.8;
  // bf16=True runs torch.autocast over the model as loaded (fp32 without torch_dtype).
  TrainingPlan p;
  p.precision = Precision::autocast_bf16;
  p.optimizer_impl = OptimizerImpl::fused;
  return p;
}

TrainingPlan under_convention(TrainingPlan plan) {
  if (plan.convention == Convention::textbook) {
    if (plan.precision == Precision::autocast_bf16) plan.precision = Precision::bf16_mixed;
    if (plan.precision == Precision::autocast_fp16) plan.precision = Precision::fp16_mixed;
  }
  return plan;
}

std::optional<Error> validate(const TrainingPlan& plan) {
  if (auto e = validate_layout(plan.layout)) return e;
  // mlx-lm trains on one Apple machine's unified memory: no DDP, ZeRO or FSDP to spread it.
  if (plan.behaviour.unified_memory && !is_single_device(plan.layout)) {
    return field_error("framework",
                       fmt::format("{} trains on one Apple machine; a layout across GPUs "
                                   "(--gpus, --zero, --fsdp) is not something it runs",
                                   plan.framework));
  }
  // Upper bounds keep every byte count far inside 64 bits (2^63 ~ 9.2e18).
  constexpr std::int64_t kMaxBatch = 1 << 20;
  constexpr std::int64_t kMaxSeq = std::int64_t{1} << 24;
  if (plan.batch < 1 || plan.batch > kMaxBatch) {
    return field_error("batch",
                       fmt::format("must be between 1 and {}, got {}", kMaxBatch, plan.batch));
  }
  if (plan.seq < 1 || plan.seq > kMaxSeq) {
    return field_error("seq", fmt::format("must be between 1 and {}, got {}", kMaxSeq, plan.seq));
  }
  if (plan.grad_accum < 1 || plan.grad_accum > kMaxBatch) {
    return field_error("grad_accum",
                       fmt::format("must be between 1 and {}, got {}", kMaxBatch, plan.grad_accum));
  }
  if (plan.eval_batch < 1 || plan.eval_batch > kMaxBatch) {
    return field_error("eval_batch",
                       fmt::format("must be between 1 and {}, got {}", kMaxBatch, plan.eval_batch));
  }
  if (plan.eval_strategy != EvalStrategy::no && !runs_trainer_evaluate(plan.framework)) {
    return field_error(
        "eval_strategy",
        fmt::format("the {} profile does not run the Hugging Face Trainer's evaluation (hf, trl, "
                    "axolotl and unsloth do; docs/frameworks.md)",
                    plan.framework));
  }
  const bool adapters = plan.method == Method::lora || plan.method == Method::qlora;
  if (adapters && (plan.lora.rank < 1 || plan.lora.rank > 65536)) {
    return field_error("lora.rank",
                       fmt::format("must be between 1 and 65536, got {}", plan.lora.rank));
  }
  if (adapters && plan.lora.targets.empty()) {
    return field_error("lora.targets", "names no module to adapt");
  }
  for (const std::string& t : plan.lora.targets) {
    if (!is_lora_target_name(t)) {
      return field_error("lora.targets",
                         fmt::format("'{}' is not a module name: q, k, v, o, gate, up, down, "
                                     "lm_head, embed, router, experts, shared_experts, all-linear, "
                                     "attention, mlp",
                                     t));
    }
  }
  for (const std::string& t : plan.lora.modules_to_save) {
    if (t != "embed" && t != "lm_head") {
      return field_error("lora.modules_to_save",
                         fmt::format("'{}' is not embed or lm_head, the modules trainmem prices "
                                     "a trained copy of",
                                     t));
    }
  }
  for (const std::string& t : plan.freeze.train_modules) {
    if (t != "norm" && !is_lora_target_name(t)) {
      return field_error(
          "freeze.train_modules",
          fmt::format("'{}' is not a module name (those of the LoRA targets, or norm)", t));
    }
  }
  if (plan.method == Method::freeze && plan.freeze.train_modules.empty() &&
      plan.freeze.train_layers.empty()) {
    return field_error("freeze.train_modules", "freeze needs modules or layers to train");
  }
  // Written so that NaN fails too: every comparison with NaN is false.
  if (!(plan.lora.dropout >= 0 && plan.lora.dropout < 1)) {
    return field_error("lora.dropout", fmt::format("must be in [0, 1), got {}", plan.lora.dropout));
  }
  if (!std::isfinite(plan.lora.alpha)) {
    return field_error("lora.alpha",
                       fmt::format("must be a finite number, got {}", plan.lora.alpha));
  }
  // Adapter flags on a method without adapters would be silently ignored.
  if (!adapters && plan.lora.dora) {
    return field_error("lora.dora", fmt::format("applies only to method lora or qlora, not {}",
                                                name_of(plan.method)));
  }
  if (plan.method != Method::qlora && !plan.quant.double_quant) {
    return field_error("quant.double_quant", "applies only to method qlora");
  }
  if (plan.method != Method::qlora && !plan.quant.prepare_kbit) {
    return field_error("quant.prepare_kbit", "applies only to method qlora");
  }
  // judge() falls back to the live bytes when the replay cannot run, so a plan must not reach it
  // with an allocator configuration PyTorch would reject.
  if (auto c = gpu::parse_alloc_conf(plan.alloc_conf, "alloc_conf"); !c) {
    return field_error("alloc_conf", c.error().reason);
  }
  for (std::int64_t layer : plan.freeze.train_layers) {
    if (layer < 0 || layer >= kMaxLayers) {
      return field_error("freeze.train_layers", fmt::format("layer {} is past any model (limit {})",
                                                            layer, kMaxLayers - 1));
    }
  }
  if (plan.params_override < 0) return field_error("params_override", "must be positive");
  return std::nullopt;
}

}  // namespace trainmem

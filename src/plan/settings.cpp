// plan_from(): text settings -> TrainingPlan. The one place a setting's text becomes a plan field,
// for the command line, measurement rows and imported configs alike.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "gpu/caching_allocator.h"
#include "plan/framework.h"
#include "plan/plan.h"
#include "plan/setting_aliases.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"
#include "util/boolean.h"
#include "util/edit_distance.h"
#include "util/text_list.h"

namespace trainmem {
namespace {

// Settings that turn a framework behaviour on, applied after the profile's behaviour (plan_from):
// each sets its knobs (FrameworkBehaviour, src/plan/knobs.cpp). torch.compile compiles the
// decoder layers together with the loss. `use_cache` and `optimizer_in_backward` work both ways:
// false is how a 4.x Trainer user turns the profile's cache off (model.config.use_cache = False),
// and how a torchtune config's optimizer_in_bwd: False turns off its full recipes' default.
// `step_only` turns knobs off: the framework's run phases beyond the training step (litgpt's
// validation pass and sample generation, a QLoRA load transient) are not priced.
struct BehaviourSwitch {
  std::string_view key;
  std::array<std::optional<Knob>, 3> knobs;
  bool false_turns_off = false;
  bool true_turns_off = false;  // true sets the knobs to 0
};
constexpr std::array<BehaviourSwitch, 8> kBehaviourSwitches{{
    {"padding_mask", {Knob::padding_mask}},
    {"offload_activations", {Knob::offload_checkpoints}},
    {"optimizer_in_backward", {Knob::optimizer_in_backward}, true},
    {"keep_outputs", {Knob::outputs_kept}},
    {"compile", {Knob::compiled_loss, Knob::compiled_layers}},
    {"use_cache", {Knob::kv_cache_in_output}, true},
    // accelerate GradientAccumulationPlugin(sync_each_batch=True): reduce every micro-batch.
    {"sync_each_batch", {Knob::skips_grad_sync_while_accumulating}, false, true},
    {"step_only",
     {Knob::eval_between_steps, Knob::generates_sample, Knob::load_quantiser},
     false,
     true},
}};

const BehaviourSwitch* behaviour_switch(std::string_view key) {
  for (const BehaviourSwitch& b : kBehaviourSwitches) {
    if (b.key == key) return &b;
  }
  return nullptr;
}

Error setting_error(const PlanSetting& s, std::string reason,
                    ErrorCode code = ErrorCode::bad_input) {
  return Error{code, "", s.origin.empty() ? s.key : s.origin, std::move(reason)};
}

// A whole number as a user or a config file may spell it: 8, 1e6, 8.0 (a JSON writer's float).
// A fraction or a value past 2^53 (where a double stops counting by one) is refused, not rounded.
Result<std::int64_t> integer(const PlanSetting& s) {
  std::size_t used = 0;
  try {
    const std::int64_t v = std::stoll(s.value, &used);
    if (used == s.value.size()) return v;
    const double x = std::stod(s.value, &used);
    constexpr double kExactDoubleLimit = 9007199254740992.0;  // 2^53
    if (used == s.value.size() && std::isfinite(x) && x == std::floor(x) &&
        std::fabs(x) <= kExactDoubleLimit) {
      return static_cast<std::int64_t>(x);
    }
  } catch (const std::exception&) {
  }
  return setting_error(s, fmt::format("'{}' is not a whole number", s.value));
}

Result<double> real(const PlanSetting& s) {
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(s.value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.value.size() || !std::isfinite(v)) {
    return setting_error(s, fmt::format("'{}' is not a number", s.value));
  }
  return v;
}

Result<bool> boolean(const PlanSetting& s) {
  if (const std::optional<bool> b = parse_boolean(s.value)) return *b;
  return setting_error(s, fmt::format("'{}' is not true or false", s.value));
}

// The canonical name of a list of LoRA target spellings ("q_proj" -> "q").
Result<std::vector<std::string>> target_names(const PlanSetting& s, bool allow_norm) {
  std::vector<std::string> out;
  for (const std::string& item : split_list(s.value)) {
    if (allow_norm && (item == "norm" || item == "layernorm")) {
      out.emplace_back("norm");
      continue;
    }
    Vocabulary v = lora_target_vocabulary();
    v.flag = s.origin.empty() ? s.key : s.origin;
    auto t = resolve_term(v, item);
    if (!t) {
      Error e = t.error();
      e.code = s.from_file ? ErrorCode::bad_input : ErrorCode::usage;  // as set_enum's
      return e;
    }
    out.push_back(t.value()->name);
  }
  return out;
}

template <class E>
std::optional<Error> set_enum(E& field, std::optional<E> (*parse)(std::string_view),
                              const Vocabulary& vocabulary, const PlanSetting& s) {
  auto term = resolve_term(vocabulary, s.value);
  if (!term) {
    Error e = term.error();
    e.field = s.origin.empty() ? s.key : s.origin;
    e.code = s.from_file ? ErrorCode::bad_input : ErrorCode::usage;
    return e;
  }
  field = *parse(term.value()->name);
  return std::nullopt;
}

std::optional<Error> apply(TrainingPlan& p, const PlanSetting& s, std::vector<std::string>& notes) {
  const std::string& k = s.key;
  if (k == "method") return set_enum(p.method, parse_method, method_vocabulary(), s);
  if (k == "precision") return set_enum(p.precision, parse_precision, precision_vocabulary(), s);
  if (k == "optimizer") {
    if (auto e = set_enum(p.optimizer, parse_optimizer, optimizer_vocabulary(), s)) return e;
    if (auto impl = implied_optimizer_impl(s.value))
      p.optimizer_impl = *parse_optimizer_impl(*impl);
    return std::nullopt;
  }
  if (k == "optimizer_impl")
    return set_enum(p.optimizer_impl, parse_optimizer_impl, optimizer_impl_vocabulary(), s);
  if (k == "checkpointing")
    return set_enum(p.checkpointing, parse_checkpointing, checkpointing_vocabulary(), s);
  if (k == "attention") return set_enum(p.attention, parse_attention, attention_vocabulary(), s);
  if (k == "loss") return set_enum(p.loss, parse_loss, loss_vocabulary(), s);
  if (k == "convention")
    return set_enum(p.convention, parse_convention, convention_vocabulary(), s);
  if (k == "quant") return set_enum(p.quant.kind, parse_quant, quant_vocabulary(), s);
  if (k == "eval_strategy")
    return set_enum(p.eval_strategy, parse_eval_strategy, eval_strategy_vocabulary(), s);
  if (k == "framework") {
    // NAME or NAME@VERSION: the name through the vocabulary (aliases), the version checked by
    // the framework profiles.
    const auto at = s.value.find('@');
    Vocabulary v = framework_vocabulary();
    v.flag = s.origin.empty() ? s.key : s.origin;
    // An unknown name is left to parse_framework, whose error lists the profiles.
    auto t = resolve_term(v, s.value.substr(0, at));
    const std::string text =
        t ? t.value()->name + (at == std::string::npos ? std::string() : s.value.substr(at))
          : s.value;
    if (auto e = parse_framework(text, p.framework, p.library_versions)) {
      Error err = *e;
      err.field = v.flag;
      return err;
    }
    return std::nullopt;
  }
  if (k == "versions") {
    if (auto e = parse_library_versions(s.value, p.library_versions)) {
      Error err = *e;
      err.field = s.origin.empty() ? s.key : s.origin;
      return err;
    }
    return std::nullopt;
  }
  if (behaviour_switch(k) != nullptr) {
    // Applied after the framework profile's behaviour (plan_from); here only checked.
    auto b = boolean(s);
    if (!b) return b.error();
    return std::nullopt;
  }
  if (k == "seq") {
    auto n = parse_tokens(s.value, s.origin.empty() ? s.key : s.origin);
    if (!n) return n.error();
    p.seq = n.value();
    return std::nullopt;
  }
  if (k == "batch" || k == "grad_accum" || k == "lora_rank" || k == "eval_batch") {
    auto n = integer(s);
    if (!n) return n.error();
    (k == "batch"        ? p.batch
     : k == "grad_accum" ? p.grad_accum
     : k == "eval_batch" ? p.eval_batch
                         : p.lora.rank) = n.value();
    return std::nullopt;
  }
  if (k == "lora_alpha" || k == "lora_dropout") {
    auto x = real(s);
    if (!x) return x.error();
    (k == "lora_alpha" ? p.lora.alpha : p.lora.dropout) = x.value();
    return std::nullopt;
  }
  if (k == "dora" || k == "double_quant" || k == "prepare_kbit") {
    auto b = boolean(s);
    if (!b) return b.error();
    (k == "dora"           ? p.lora.dora
     : k == "double_quant" ? p.quant.double_quant
                           : p.quant.prepare_kbit) = b.value();
    return std::nullopt;
  }
  if (k == "lora_targets" || k == "train_modules") {
    auto names = target_names(s, k == "train_modules");
    if (!names) return names.error();
    (k == "lora_targets" ? p.lora.targets : p.freeze.train_modules) = names.value();
    return std::nullopt;
  }
  if (k == "modules_to_save") {
    auto names = target_names(s, false);
    if (!names) return names.error();
    for (const std::string& n : names.value()) {
      if (n == "embed" || n == "lm_head") continue;
      return setting_error(s,
                           fmt::format("'{}': trainmem prices trained copies of embed_tokens and "
                                       "lm_head (PEFT modules_to_save); not of {}",
                                       n, n),
                           s.from_file ? ErrorCode::bad_input : ErrorCode::usage);
    }
    p.lora.modules_to_save = names.value();
    return std::nullopt;
  }
  if (k == "train_layers") {
    // "0-3,30,31" -> 0,1,2,3,30,31
    p.freeze.train_layers.clear();
    for (const std::string& part : split_list(s.value)) {
      const auto dash = part.find('-', 1);
      PlanSetting first{s.key, part.substr(0, dash), s.origin, s.from_file};
      PlanSetting last{s.key, dash == std::string::npos ? part : part.substr(dash + 1), s.origin,
                       s.from_file};
      auto a = integer(first);
      auto b = integer(last);
      if (!a || !b || a.value() < 0 || b.value() < a.value() || b.value() - a.value() > 100000) {
        return setting_error(s, fmt::format("'{}' is not a layer index or range like 0-3", part),
                             s.from_file ? ErrorCode::bad_input : ErrorCode::usage);
      }
      // No loop runs as many times as a typed number: indices stop at the layer cap.
      if (b.value() >= kMaxLayers) {
        return setting_error(
            s, fmt::format("layer {} is past any model (limit {})", b.value(), kMaxLayers - 1),
            s.from_file ? ErrorCode::bad_input : ErrorCode::usage);
      }
      for (std::int64_t l = a.value(); l <= b.value(); ++l) p.freeze.train_layers.push_back(l);
    }
    return std::nullopt;
  }
  if (k == "params") {
    auto n = parse_count(s.value, s.origin.empty() ? s.key : s.origin);
    if (!n) return n.error();
    p.params_override = n.value();
    return std::nullopt;
  }
  if (k == "alloc_conf") {
    // Checked here, where the setting's origin (--alloc-conf, PYTORCH_CUDA_ALLOC_CONF, a row)
    // can be named; the replay parses it again.
    if (auto c = gpu::parse_alloc_conf(s.value, s.origin.empty() ? s.key : s.origin); !c) {
      return c.error();
    }
    p.alloc_conf = s.value;
    return std::nullopt;
  }
  if (k == "learning_rate" || k == "epochs") {
    notes.push_back(fmt::format("{} = {}: no effect on memory, not priced.", s.origin, s.value));
    return std::nullopt;
  }
  // A misspelt key (bacth) names the nearest settings.
  std::string near;
  for (const std::string& key : plan_setting_keys()) {
    if (edit_distance(k, key) <= 2) near += (near.empty() ? "" : ", ") + key;
  }
  for (const SettingAlias& a : setting_aliases()) {
    if (edit_distance(k, a.name) <= 2 && near.find(a.name) == std::string::npos) {
      near += (near.empty() ? "" : ", ") + std::string(a.name);
    }
  }
  return setting_error(s, fmt::format("'{}' is not a plan setting{}", k,
                                      near.empty() ? "" : " (did you mean " + near + "?)"));
}

// Which method a setting needs to mean anything, or empty when it applies to every method.
std::string_view needs(const std::string& key) {
  if (key == "lora_rank" || key == "lora_alpha" || key == "lora_dropout" || key == "lora_targets" ||
      key == "dora" || key == "modules_to_save")
    return "lora";
  if (key == "quant" || key == "double_quant" || key == "prepare_kbit") return "qlora";
  if (key == "train_modules") return "freeze";
  return "";
}

bool applies(std::string_view need, Method m) {
  if (need == "lora") return m == Method::lora || m == Method::qlora;
  if (need == "qlora") return m == Method::qlora;
  if (need == "freeze") return m == Method::freeze;
  return true;
}

}  // namespace

bool setting_takes_list(std::string_view key) {
  return key == "lora_targets" || key == "modules_to_save" || key == "train_modules" ||
         key == "train_layers";
}

const std::vector<std::string>& plan_setting_keys() {
  static const std::vector<std::string> keys = {"method",
                                                "precision",
                                                "optimizer",
                                                "optimizer_impl",
                                                "batch",
                                                "seq",
                                                "grad_accum",
                                                "checkpointing",
                                                "attention",
                                                "loss",
                                                "framework",
                                                "convention",
                                                "params",
                                                "lora_rank",
                                                "lora_alpha",
                                                "lora_dropout",
                                                "lora_targets",
                                                "dora",
                                                "modules_to_save",
                                                "quant",
                                                "double_quant",
                                                "prepare_kbit",
                                                "train_modules",
                                                "train_layers",
                                                "learning_rate",
                                                "epochs",
                                                "versions",
                                                "padding_mask",
                                                "offload_activations",
                                                "optimizer_in_backward",
                                                "keep_outputs",
                                                "use_cache",
                                                "sync_each_batch",
                                                "compile",
                                                "step_only",
                                                "eval_strategy",
                                                "eval_batch",
                                                "alloc_conf"};
  return keys;
}

PlanPatch default_settings() {
  return settings_of(hf_trainer_defaults());
}

PlanPatch settings_of(const TrainingPlan& d) {
  const auto join = [](const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& i : items) out += (out.empty() ? "" : ",") + i;
    return out;
  };
  const std::vector<std::pair<std::string, std::string>> values = {
      {"method", std::string(name_of(d.method))},
      {"precision", std::string(name_of(d.precision))},
      {"optimizer", std::string(name_of(d.optimizer))},
      {"optimizer_impl", std::string(name_of(d.optimizer_impl))},
      {"batch", std::to_string(d.batch)},
      {"seq", std::to_string(d.seq)},
      {"grad_accum", std::to_string(d.grad_accum)},
      {"checkpointing", std::string(name_of(d.checkpointing))},
      {"attention", std::string(name_of(d.attention))},
      {"loss", std::string(name_of(d.loss))},
      {"framework", d.framework},
      {"convention", std::string(name_of(d.convention))},
      {"lora_rank", std::to_string(d.lora.rank)},
      {"lora_dropout", fmt::format("{}", d.lora.dropout)},
      {"lora_targets", join(d.lora.targets)},
      {"dora", d.lora.dora ? "true" : "false"},
      {"modules_to_save", join(d.lora.modules_to_save)},
      {"quant", std::string(name_of(d.quant.kind))},
      {"double_quant", d.quant.double_quant ? "true" : "false"},
      {"prepare_kbit", d.quant.prepare_kbit ? "true" : "false"},
      {"train_modules", join(d.freeze.train_modules)},
      {"train_layers", ""},
      {"eval_strategy", std::string(name_of(d.eval_strategy))},
      {"eval_batch", std::to_string(d.eval_batch)},
      {"alloc_conf", d.alloc_conf}};
  PlanPatch out;
  for (const auto& [key, value] : values) out.push_back({key, value, "settings_of()", false});
  return out;
}

// validate() names a plan field ("batch", "lora.dropout"); when a setting of the patch set it, the
// error names that setting's origin instead, so a file's bad value names the file and its key
// ("sft.yaml: per_device_train_batch_size") and a flag's names the flag as typed.
namespace {

Error named_by_its_setting(Error e, const PlanPatch& patch) {
  std::string key = e.field;
  std::replace(key.begin(), key.end(), '.', '_');
  for (auto it = patch.rbegin(); it != patch.rend(); ++it) {
    if (it->key != key || it->origin.empty()) continue;
    e.field = it->origin;
    break;
  }
  return e;
}

}  // namespace

Result<PlanResult> plan_from(const PlanPatch& given_patch) {
  // The ecosystem's names (per_device_train_batch_size, bf16=True) become plan settings first.
  PlanPatch patch;
  for (const PlanSetting& s : given_patch) {
    auto canonical = canonical_settings(s);
    if (!canonical) return canonical.error();
    patch.insert(patch.end(), canonical->begin(), canonical->end());
  }
  PlanResult r{hf_trainer_defaults(), {}};
  const auto given = [&patch](std::string_view key) {
    return std::any_of(patch.begin(), patch.end(),
                       [key](const PlanSetting& s) { return s.key == key; });
  };
  // The framework profile's defaults seed the starting plan like the HF Trainer's do: the
  // framework and method settings first, then the profile's default for each setting the patch
  // does not give (a profile default wins over the global one, a given setting over both).
  {
    TrainingPlan probe = r.plan;
    std::vector<std::string> ignored;
    for (const PlanSetting& s : patch) {
      if (s.key != "framework" && s.key != "method" && s.key != "versions") continue;
      if (auto e = apply(probe, s, ignored)) return *e;
    }
    // An optimizer name that implies an implementation (adamw_torch_fused) gives the impl.
    const bool impl_given =
        given("optimizer_impl") ||
        std::any_of(patch.begin(), patch.end(), [](const PlanSetting& s) {
          return s.key == "optimizer" && implied_optimizer_impl(s.value).has_value();
        });
    std::string seeded;  // "checkpointing full, loss fused": for the note
    for (const char* key : {"precision", "optimizer", "optimizer_impl", "checkpointing", "loss",
                            "lora_dropout", "prepare_kbit"}) {
      if (given(key) || (std::string_view(key) == "optimizer_impl" && impl_given)) continue;
      const std::string_view d =
          profile_default(probe.framework, name_of(probe.method), key, probe.library_versions);
      if (d.empty()) continue;
      const PlanSetting seed{key, std::string(d), "--framework " + probe.framework, true};
      if (auto e = apply(r.plan, seed, ignored)) return *e;
      seeded += fmt::format("{}{} {}", seeded.empty() ? "" : ", ", key, d);
    }
    if (!seeded.empty()) {
      r.notes.push_back(
          fmt::format("The {} profile's defaults for settings not given: {} "
                      "(docs/frameworks.md; a flag overrides each).",
                      probe.framework, seeded));
    }
  }
  for (const PlanSetting& s : patch) {
    if (auto e = apply(r.plan, s, r.notes)) return *e;
  }
  // The profile's behaviour, then the switches that turn a behaviour on.
  apply_framework(r.plan);
  for (const PlanSetting& s : patch) {
    const BehaviourSwitch* sw = behaviour_switch(s.key);
    if (sw == nullptr) continue;
    auto on = boolean(s);
    if (!on || (!on.value() && !sw->false_turns_off)) continue;
    if (s.key == "use_cache" && on.value() && !runs_transformers_models(r.plan.framework)) {
      return setting_error(s,
                           fmt::format("builds transformers' DynamicCache; framework {} runs "
                                       "its own model code",
                                       r.plan.framework),
                           s.from_file ? ErrorCode::bad_input : ErrorCode::usage);
    }
    const bool knob_on = sw->true_turns_off ? !on.value() : on.value();
    for (const std::optional<Knob>& knob : sw->knobs) {
      if (knob) set_knob(r.plan.behaviour, *knob, knob_on ? 1 : 0);
    }
  }
  // Settings that the chosen method ignores: an error when typed, a note when imported.
  for (const PlanSetting& s : patch) {
    const std::string_view need = needs(s.key);
    if (applies(need, r.plan.method)) continue;
    const std::string reason =
        fmt::format("has no effect with method {} (it needs --method {}{})", name_of(r.plan.method),
                    need, need == "lora" ? " or qlora" : "");
    if (!s.from_file) return Error{ErrorCode::usage, "", s.origin, reason};
    r.notes.push_back(fmt::format("{} {}; ignored.", s.origin, reason));
  }
  // LoRA recipes (PEFT, TRL, axolotl) load the frozen base with torch_dtype=torch.bfloat16; the
  // HF Trainer's bf16=True then autocasts over a bf16 base with fp32 adapters. Without a stated
  // precision a LoRA plan prices that, and says so.
  const bool precision_given = std::any_of(
      patch.begin(), patch.end(), [](const PlanSetting& s) { return s.key == "precision"; });
  if (!precision_given && r.plan.method == Method::lora && r.plan.convention == Convention::exact &&
      profile_default(r.plan.framework, name_of(r.plan.method), "precision").empty()) {
    r.plan.precision = Precision::bf16;
    r.notes.push_back(
        "LoRA without --precision: the base loaded in bf16 (torch_dtype=torch.bfloat16, as PEFT "
        "and TRL recipes do), adapters in fp32; --precision bf16-mixed prices an fp32-loaded "
        "base under autocast.");
  }
  r.plan = under_convention(r.plan);
  if (auto e = validate(r.plan)) return named_by_its_setting(*e, patch);
  return r;
}

}  // namespace trainmem

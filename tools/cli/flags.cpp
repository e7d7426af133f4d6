#include "flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "trainmem/import.h"
#include "trainmem/plan_check.h"
#include "trainmem/units.h"
#include "trainmem/vocabulary.h"

namespace trainmem::cli {
namespace {

// A CLI11 check built from a vocabulary: an unknown value fails at parse time (exit 2) with the
// accepted names and the nearest ones.
CLI::Validator vocabulary_check(const Vocabulary& vocabulary) {
  return CLI::Validator(
      [&vocabulary](std::string& value) -> std::string {
        auto term = resolve_term(vocabulary, value);
        return term ? std::string() : term.error().reason;
      },
      "", "");
}

// Registers one option that records its value as plan setting `key`. `names` is CLI11's list:
// the trainmem name first, then the ecosystem's spellings (HfArgumentParser accepts both
// --per_device_train_batch_size and --per-device-train-batch-size).
CLI::Option* setting(CLI::App& cmd, PlanFlags& f, const std::string& names, const std::string& key,
                     const std::string& help) {
  const std::string flag = names.substr(0, names.find(','));
  return cmd.add_option_function<std::string>(
      names,
      [&f, key, flag](const std::string& v) {
        f.given.push_back({key, v, flag, false});
      },
      help);
}

// A flag without a value that stands for a setting (--gradient-checkpointing = --checkpointing
// full, as HF TrainingArguments spells it).
void switch_flag(CLI::App& cmd, PlanFlags& f, const std::string& names, const std::string& key,
                 const std::string& value, const std::string& help) {
  const std::string flag = names.substr(0, names.find(','));
  cmd.add_flag_function(
      names,
      [&f, key, value, flag](std::int64_t count) {
        if (count > 0) f.given.push_back({key, value, flag, false});
      },
      help);
}

std::string with_default(const Vocabulary& v, std::string_view current) {
  return fmt::format("{} [default: {}]", help_names(v), current);
}

}  // namespace

void add_plan_flags(CLI::App& cmd, PlanFlags& f) {
  // A repeated flag takes its last value, as argparse and HfArgumentParser do, so a suggested
  // change can be appended to a command that already sets the same flag.
  cmd.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  const TrainingPlan d = hf_trainer_defaults();
  cmd.add_option("--from", f.from,
                 "read settings from another tool's config (TRL/HF TrainingArguments JSON or YAML, "
                 "PEFT adapter_config.json, BitsAndBytesConfig, axolotl, LLaMA-Factory, "
                 "torchtune, DeepSpeed, accelerate); repeatable; flags override it")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  // The order of these calls is the order settings apply: --optimizer before --optimizer-impl,
  // so an explicit implementation beats the one an HF optim name implies.
  setting(cmd, f, "--method", "method", with_default(method_vocabulary(), name_of(d.method)))
      ->check(vocabulary_check(method_vocabulary()));
  switch_flag(cmd, f, "--load-in-4bit,--load_in_4bit", "method", "qlora",
              "QLoRA: the base in 4-bit (same as --method qlora)");
  setting(cmd, f, "--precision", "precision",
          with_default(precision_vocabulary(), name_of(d.precision)))
      ->check(vocabulary_check(precision_vocabulary()));
  switch_flag(cmd, f, "--bf16", "precision", "bf16-mixed",
              "HF TrainingArguments bf16=True (same as --precision bf16-mixed)");
  switch_flag(cmd, f, "--fp16", "precision", "fp16-mixed",
              "HF TrainingArguments fp16=True (same as --precision fp16-mixed)");
  setting(cmd, f, "--optimizer,--optim", "optimizer",
          with_default(optimizer_vocabulary(), name_of(d.optimizer)))
      ->check(vocabulary_check(optimizer_vocabulary()));
  setting(cmd, f, "--optimizer-impl", "optimizer_impl",
          with_default(optimizer_impl_vocabulary(), name_of(d.optimizer_impl)))
      ->check(vocabulary_check(optimizer_impl_vocabulary()));
  setting(cmd, f,
          "--batch,--per-device-train-batch-size,--per_device_train_batch_size,"
          "--micro-batch-size,--micro_batch_size,--batch-size",
          "batch", fmt::format("micro-batch per GPU (sequences) [default: {}]", d.batch));
  setting(cmd, f,
          "--seq,--max-length,--max_length,--max-seq-length,--max_seq_length,--sequence-len,"
          "--cutoff-len,--cutoff_len",
          "seq",
          fmt::format("longest sequence in a batch, tokens: 2048, 4k, 32k [default: {}]", d.seq));
  setting(cmd, f, "--grad-accum,--gradient-accumulation-steps,--gradient_accumulation_steps",
          "grad_accum",
          fmt::format("micro-batches per optimizer step [default: {}]", d.grad_accum));
  setting(cmd, f, "--checkpointing", "checkpointing",
          with_default(checkpointing_vocabulary(), name_of(d.checkpointing)))
      ->check(vocabulary_check(checkpointing_vocabulary()));
  switch_flag(cmd, f, "--gradient-checkpointing,--gradient_checkpointing", "checkpointing", "full",
              "same as --checkpointing full");
  setting(cmd, f, "--attention,--attn-implementation,--attn_implementation", "attention",
          with_default(attention_vocabulary(), name_of(d.attention)))
      ->check(vocabulary_check(attention_vocabulary()));
  setting(cmd, f, "--loss", "loss", with_default(loss_vocabulary(), name_of(d.loss)))
      ->check(vocabulary_check(loss_vocabulary()));
  switch_flag(cmd, f, "--use-liger-kernel,--use_liger_kernel", "loss", "fused",
              "HF use_liger_kernel=True (same as --loss fused)");
  setting(cmd, f, "--framework", "framework",
          with_default(framework_vocabulary(), d.framework) + "; whose allocations are modelled")
      ->check(vocabulary_check(framework_vocabulary()));
  setting(cmd, f, "--convention", "convention",
          with_default(convention_vocabulary(), name_of(d.convention)))
      ->check(vocabulary_check(convention_vocabulary()));
  setting(cmd, f, "--params", "params", "price this published parameter count, e.g. 1.54e9");
  setting(cmd, f, "--lora-rank,--lora-r,--lora_r", "lora_rank",
          fmt::format("LoRA rank r [default: {}]", d.lora.rank));
  setting(cmd, f, "--lora-alpha,--lora_alpha", "lora_alpha", "LoRA alpha (no memory effect)");
  setting(cmd, f, "--lora-dropout,--lora_dropout", "lora_dropout",
          "LoRA dropout (saves masks when > 0)");
  setting(cmd, f, "--lora-targets,--target-modules,--target_modules,--lora-target-modules",
          "lora_targets",
          "comma-separated: " + help_names(lora_target_vocabulary()) +
              " [default: q,k,v,o,gate,up,down]");
  switch_flag(cmd, f, "--dora,--use-dora,--use_dora", "dora", "true",
              "DoRA: add a magnitude vector per adapted linear");
  setting(cmd, f, "--quant", "quant", with_default(quant_vocabulary(), name_of(d.quant.kind)))
      ->check(vocabulary_check(quant_vocabulary()));
  switch_flag(cmd, f, "--no-double-quant", "double_quant", "false", "keep fp32 absmax per block");
  switch_flag(cmd, f, "--no-prepare-kbit", "prepare_kbit", "false",
              "skip prepare_model_for_kbit_training's fp32 upcast");
  setting(cmd, f, "--train-modules", "train_modules", "freeze: modules that train, e.g. q,v,norm");
  setting(cmd, f, "--train-layers", "train_layers",
          "freeze: layers that train; lora/qlora: layers adapted, e.g. 20-27");
  setting(cmd, f, "--learning-rate,--learning_rate,--lr", "learning_rate",
          "accepted so an HF command can be pasted; no memory effect");
  setting(cmd, f, "--num-train-epochs,--num_train_epochs", "epochs",
          "accepted so an HF command can be pasted; no memory effect");
}

void add_device_flags(CLI::App& cmd, DeviceFlags& f) {
  cmd.add_option("--memory", f.memory, "device memory, e.g. 32GB or 24GiB");
  cmd.add_option("--gpu", f.gpu, "a device from `trainmem gpus`, e.g. rtx-4090");
  cmd.add_option("--reserve", f.reserve, "memory kept back for the OS or driver, e.g. 2GB");
}

void add_output_flags(CLI::App& cmd, OutputFlags& f) {
  cmd.add_flag("--json", f.json, "print JSON (docs/formats.md)");
  cmd.add_option("--units", f.units, "gib | gb | mib | bytes")->capture_default_str();
}

Result<PlanResult> make_plan(const PlanFlags& f) {
  return plan_from(f.given);
}

Result<ImportedPlan> import_plan(const PlanFlags& f) {
  ImportedPlan out;
  PlanPatch patch;
  std::vector<std::string> reports;
  for (const std::string& file : f.from) {
    auto imported = import_config(file);
    if (!imported) return imported.error();
    const ImportedConfig& c = imported.value();
    if (!c.model.empty()) out.model = c.model;
    patch.insert(patch.end(), c.patch.begin(), c.patch.end());
    auto list = [](const std::vector<std::string>& items) {
      std::string s;
      for (const std::string& i : items) s += (s.empty() ? "" : "; ") + i;
      return s.empty() ? std::string("none") : s;
    };
    reports.push_back(fmt::format("--from {} read as {}. Used: {}. Ignored: {}.", file, c.format,
                                  list(c.used), list(c.ignored)));
  }
  // A quantisation config and an adapter config together are QLoRA: the adapter file's
  // "lora" must not undo the other file's "qlora".
  const bool qlora = std::any_of(patch.begin(), patch.end(), [](const PlanSetting& s) {
    return s.key == "method" && s.value == "qlora";
  });
  if (qlora) {
    std::erase_if(patch,
                  [](const PlanSetting& s) { return s.key == "method" && s.value == "lora"; });
  }
  patch.insert(patch.end(), f.given.begin(), f.given.end());
  auto plan = plan_from(patch);
  if (!plan) return plan.error();
  out.plan = std::move(plan).value();
  out.plan.notes.insert(out.plan.notes.begin(), reports.begin(), reports.end());
  return out;
}

Result<std::optional<Device>> make_device(const DeviceFlags& f) {
  std::optional<Device> device;
  if (!f.gpu.empty() && !f.memory.empty()) {
    return Error{ErrorCode::usage, "", "--gpu", "give either --gpu or --memory, not both"};
  }
  if (!f.memory.empty()) {
    auto bytes = parse_size(f.memory, "--memory");
    if (!bytes) return bytes.error();
    device = custom_device(bytes.value());
  }
  if (!f.gpu.empty()) {
    auto found = find_device(f.gpu);
    if (!found) return found.error();
    device = found.value();
  }
  if (!f.reserve.empty()) {
    auto bytes = parse_size(f.reserve, "--reserve");
    if (!bytes) return bytes.error();
    if (!device) return Error{ErrorCode::usage, "", "--reserve", "needs --memory or --gpu"};
    device->reserve_bytes = bytes.value();
  }
  return device;
}

Result<RenderOptions> make_render_options(const OutputFlags& f) {
  RenderOptions o;
  if (auto u = parse_unit(f.units)) {
    o.unit = *u;
    return o;
  }
  return Error{ErrorCode::usage, "", "--units",
               fmt::format("'{}' is not one of: gib, gb, mib, bytes", f.units)};
}

Result<PricingInputs> read_pricing_inputs(const std::string& model, const PlanFlags& plan,
                                          const DeviceFlags& device, const OutputFlags& output) {
  auto p = import_plan(plan);
  if (!p) return p.error();
  PlanResult settled = std::move(p->plan);
  const std::string name = model.empty() ? p->model : model;
  if (name.empty()) {
    return Error{ErrorCode::usage, "", "MODEL",
                 "name a model (preset, HF id, config.json or folder), or a --from file that "
                 "names one"};
  }
  auto d = make_device(device);
  if (!d) return d.error();
  auto o = make_render_options(output);
  if (!o) return o.error();
  auto m = load_model(name);
  if (!m) return m.error();
  if (auto e = check_targets(m.value(), settled.plan)) return *e;
  for (std::string& n : plan_notes(m.value(), settled.plan, d->has_value() ? &**d : nullptr))
    settled.notes.push_back(std::move(n));
  return PricingInputs{std::move(settled.plan), std::move(settled.notes), std::move(d).value(),
                       o.value(), std::move(m).value()};
}

int report(const Error& error) {
  std::cerr << "trainmem: error: " << error.message() << "\n";
  return error.code == ErrorCode::usage ? 2 : 1;
}

}  // namespace trainmem::cli

#include "flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <concepts>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "trainmem/distributed.h"
#include "trainmem/import.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem::cli {
namespace {

// The long flag names the command line holds (register_only_named_flags); nullopt: register all.
std::optional<std::set<std::string, std::less<>>>& named_flags() {
  static std::optional<std::set<std::string, std::less<>>> named;
  return named;
}

// Whether an option with CLI11's comma-separated `names` is to be registered.
bool wanted(std::string_view names) {
  const auto& named = named_flags();
  if (!named) return true;
  while (!names.empty()) {
    const std::size_t comma = names.find(',');
    if (named->contains(names.substr(0, comma))) return true;
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
  }
  return false;
}

// Options in a titled section of --help. A section is also a cost boundary: CLI11 checks each new
// option's names against every option already in its own App (CLI/App.hpp add_option), so ~80
// options in one App cost a quarter of a whole `trainmem estimate` run; in sections of at most
// ~20 the check is a tenth of that. Sections keep registration order, and CLI11 runs an App's
// own options' callbacks and then its sections' in order (App::_process_callbacks), so settings
// still apply in the order they are registered here. A section's App (~18,000 instructions) is
// made with its first option, so a section none of whose flags the command line names
// (register_only_named_flags) costs nothing; with every flag registered, each section is made
// where it was before, just ahead of its options.
class Section {
 public:
  Section(CLI::App& cmd, std::string title) : cmd_(cmd), title_(std::move(title)) {}
  CLI::App& app() {
    if (group_ == nullptr) {
      group_ = cmd_.add_option_group(title_);
      group_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    return *group_;
  }

 private:
  CLI::App& cmd_;
  std::string title_;
  CLI::App* group_ = nullptr;
};

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

// A flag's help: its text, or a function that makes it, so that the help of a flag left
// unregistered (register_only_named_flags) is never built.
std::string help_text(std::string_view text) {
  return std::string(text);
}
template <std::invocable F>
std::string help_text(const F& make) {
  return make();
}

// Registers one option that records its value as plan setting `key`. `names` is CLI11's list:
// the trainmem name first, then the ecosystem's spellings (HfArgumentParser accepts both
// --per_device_train_batch_size and --per-device-train-batch-size).
// `vocabulary`: the values accepted (checked at parse time), or none.
template <class Help>
void setting(Section& cmd, PlanFlags& f, std::string_view names, std::string_view key,
             const Help& help, const Vocabulary& (*vocabulary)() = nullptr) {
  if (!wanted(names)) return;
  const std::string flag(names.substr(0, names.find(',')));
  CLI::Option* o = cmd.app().add_option_function<std::string>(
      std::string(names),
      [&f, key = std::string(key), flag](const std::string& v) {
        f.given.push_back({key, v, flag, false});
      },
      help_text(help));
  if (vocabulary != nullptr) o->check(vocabulary_check(vocabulary()));
}

// A flag without a value that stands for a setting (--gradient-checkpointing = --checkpointing
// full, as HF TrainingArguments spells it).
void switch_flag(Section& cmd, PlanFlags& f, std::string_view names, std::string_view key,
                 std::string_view value, std::string_view help) {
  if (!wanted(names)) return;
  const std::string flag(names.substr(0, names.find(',')));
  cmd.app().add_flag_function(
      std::string(names),
      [&f, key = std::string(key), value = std::string(value), flag](std::int64_t count) {
        if (count > 0) f.given.push_back({key, value, flag, false});
      },
      std::string(help));
}

std::string with_default(const Vocabulary& v, std::string_view current) {
  return fmt::format("{} [default: {}]", help_names(v), current);
}

template <class E>
Result<E> parse_enum(std::optional<E> (*parse)(std::string_view), const std::string& text,
                     const std::string& flag, std::string_view accepted) {
  if (auto v = parse(text)) return *v;
  return Error{ErrorCode::usage, "", flag, fmt::format("'{}' is not one of: {}", text, accepted)};
}

}  // namespace

std::set<std::string> plan_keys_of(const std::vector<std::string>& words) {
  // Every plan flag, whatever this command line names: `words` may hold flags it does not.
  auto& named = named_flags();
  const auto saved = std::exchange(named, std::nullopt);
  CLI::App scratch;
  PlanFlags f;
  add_plan_flags(scratch, f);
  named = saved;
  try {
    scratch.parse(std::vector<std::string>(words.rbegin(), words.rend()));  // CLI11: reversed
  } catch (const CLI::ParseError&) {
    return {};
  }
  std::set<std::string> keys;
  for (const PlanSetting& s : f.given) keys.insert(s.key);
  return keys;
}

void register_only_named_flags(const std::vector<std::string>& args) {
  std::set<std::string, std::less<>> named;
  for (const std::string& a : args) {
    const bool short_option =
        a.size() >= 2 && a[0] == '-' && a[1] != '-' && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.';
    if (short_option || a == "--help" || a == "--help-all") {
      named_flags().reset();  // help lists every flag; -h or -o may be anything
      return;
    }
    if (a.size() > 2 && a.starts_with("--")) named.insert(a.substr(0, a.find('=')));
  }
  named_flags() = std::move(named);
}

void add_plan_flags(CLI::App& cmd, PlanFlags& f) {
  // A repeated flag takes its last value, as argparse and HfArgumentParser do, so a suggested
  // change can be appended to a command that already sets the same flag.
  cmd.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  const TrainingPlan d = hf_trainer_defaults();
  cmd.add_option("--from", f.from,
                 "read settings from another tool's config (TRL/HF TrainingArguments JSON or YAML, "
                 "PEFT adapter_config.json, BitsAndBytesConfig, axolotl, LLaMA-Factory, "
                 "torchtune, DeepSpeed, accelerate); the layout from a ds_config.json, accelerate "
                 "FSDP YAML, torchtitan TOML or torchrun/Megatron launch script; repeatable")
      // One file per --from, so `--from sft.yaml qwen3-8b` leaves the model to MODEL.
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  // The order of these calls is the order settings apply: --optimizer before --optimizer-impl,
  // so an explicit implementation beats the one an HF optim name implies.
  Section step(cmd, "Training step");
  Section* g = &step;
  setting(
      *g, f, "--method", "method",
      [&] { return with_default(method_vocabulary(), name_of(d.method)); }, method_vocabulary);
  switch_flag(*g, f, "--load-in-4bit,--load_in_4bit", "method", "qlora",
              "QLoRA: the base in 4-bit (same as --method qlora)");
  setting(
      *g, f, "--precision", "precision",
      [&] { return with_default(precision_vocabulary(), name_of(d.precision)); },
      precision_vocabulary);
  switch_flag(*g, f, "--bf16", "precision", "bf16-mixed",
              "HF TrainingArguments bf16=True (same as --precision bf16-mixed)");
  switch_flag(*g, f, "--fp16", "precision", "fp16-mixed",
              "HF TrainingArguments fp16=True (same as --precision fp16-mixed)");
  setting(
      *g, f, "--optimizer,--optim", "optimizer",
      [&] { return with_default(optimizer_vocabulary(), name_of(d.optimizer)); },
      optimizer_vocabulary);
  setting(
      *g, f, "--optimizer-impl", "optimizer_impl",
      [&] { return with_default(optimizer_impl_vocabulary(), name_of(d.optimizer_impl)); },
      optimizer_impl_vocabulary);
  setting(*g, f,
          "--batch,--per-device-train-batch-size,--per_device_train_batch_size,"
          "--micro-batch-size,--micro_batch_size,--batch-size",
          "batch",
          [&] { return fmt::format("micro-batch per GPU (sequences) [default: {}]", d.batch); });
  setting(*g, f,
          "--seq,--max-length,--max_length,--max-seq-length,--max_seq_length,--sequence-len,"
          "--cutoff-len,--cutoff_len",
          "seq", [&] {
            return fmt::format("longest sequence in a batch, tokens: 2048, 4k, 32k [default: {}]",
                               d.seq);
          });
  setting(*g, f, "--grad-accum,--gradient-accumulation-steps,--gradient_accumulation_steps",
          "grad_accum", [&] {
            return fmt::format("micro-batches per optimizer step [default: {}]", d.grad_accum);
          });
  setting(
      *g, f, "--checkpointing", "checkpointing",
      [&] { return with_default(checkpointing_vocabulary(), name_of(d.checkpointing)); },
      checkpointing_vocabulary);
  switch_flag(*g, f, "--gradient-checkpointing,--gradient_checkpointing", "checkpointing", "full",
              "same as --checkpointing full");
  setting(
      *g, f, "--attention,--attn-implementation,--attn_implementation", "attention",
      [&] { return with_default(attention_vocabulary(), name_of(d.attention)); },
      attention_vocabulary);
  setting(
      *g, f, "--loss", "loss", [&] { return with_default(loss_vocabulary(), name_of(d.loss)); },
      loss_vocabulary);
  switch_flag(*g, f, "--use-liger-kernel,--use_liger_kernel", "loss", "fused",
              "HF use_liger_kernel=True (same as --loss fused)");
  Section eval(cmd, "Evaluation during training");
  g = &eval;
  setting(
      *g, f, "--eval-strategy,--eval_strategy,--evaluation-strategy,--evaluation_strategy",
      "eval_strategy",
      [&] {
        return with_default(eval_strategy_vocabulary(), name_of(d.eval_strategy)) +
               "; steps or epoch prices Trainer.evaluate() between optimizer steps";
      },
      eval_strategy_vocabulary);
  setting(*g, f,
          "--eval-batch,--per-device-eval-batch-size,--per_device_eval_batch_size,"
          "--eval-batch-size,--eval_batch_size",
          "eval_batch", [&] {
            return fmt::format(
                "sequences per evaluation forward (per_device_eval_batch_size) "
                "[default: {}]",
                d.eval_batch);
          });
  Section framework(cmd, "Framework");
  g = &framework;
  setting(*g, f, "--framework", "framework", [&] {
    return with_default(framework_vocabulary(), d.framework) +
           ", optionally NAME@VERSION; whose allocations are modelled; its profile's defaults "
           "apply to settings not given (docs/frameworks.md)";
  });
  setting(*g, f, "--versions", "versions",
          "library versions whose behaviour differs, e.g. transformers=4.43,"
          "bitsandbytes=0.41; cuda=13.0 is the torch build's CUDA runtime (torch.version.cuda), "
          "which sizes the CUDA context (default: current releases, CUDA 12.8)");
  switch_flag(*g, f, "--padding-mask", "padding_mask", "true",
              "batches carry a padding mask (SDPA repeats K/V and takes the masked path)");
  switch_flag(*g, f, "--offload-activations", "offload_activations", "true",
              "checkpointed layer inputs go to host memory (torchtune, unsloth, axolotl offload)");
  switch_flag(*g, f, "--optimizer-in-backward", "optimizer_in_backward", "true",
              "step each parameter in backward and free its gradient (torchtune optimizer_in_bwd)");
  switch_flag(*g, f, "--keep-outputs", "keep_outputs", "true",
              "the training loop keeps the model output (logits) alive through backward");
  switch_flag(*g, f, "--use-cache,--use_cache", "use_cache", "true",
              "the forward builds HF's KV cache (config use_cache; a custom loop's model(**batch) "
              "without gradient checkpointing, the Trainer before transformers 5)");
  switch_flag(*g, f, "--no-use-cache,--no_use_cache", "use_cache", "false",
              "the forward builds no KV cache (use_cache=False), whatever the framework's default");
  switch_flag(*g, f, "--sync-each-batch,--sync_each_batch", "sync_each_batch", "true",
              "reduce the gradients after every micro-batch (accelerate "
              "GradientAccumulationPlugin(sync_each_batch=True)): FSDP keeps them sharded while "
              "accumulating");
  switch_flag(*g, f, "--step-only", "step_only", "true",
              "price the training step alone: not the framework's validation pass, sample "
              "generation or QLoRA load transient (litgpt runs them in the process it reports)");
  switch_flag(*g, f, "--compile,--torch-compile,--torch_compile", "compile", "true",
              "torch.compile: the loss saves the logits and two fp32 values per token instead "
              "of the fp32 log_softmax; Llama-shaped layers save the compiled set (docs/"
              "frameworks.md)");
  setting(
      *g, f, "--convention", "convention",
      [&] { return with_default(convention_vocabulary(), name_of(d.convention)); },
      convention_vocabulary);
  setting(*g, f, "--params", "params", "price this published parameter count, e.g. 1.54e9");
  setting(*g, f, "--alloc-conf", "alloc_conf",
          "PYTORCH_ALLOC_CONF for the allocator model, e.g. expandable_segments:True "
          "(default: the environment's PYTORCH_ALLOC_CONF, else PYTORCH_CUDA_ALLOC_CONF)");
  Section adapters(cmd, "Adapters, quantisation and freezing");
  g = &adapters;
  setting(*g, f, "--lora-rank,--lora-r,--lora_r", "lora_rank",
          [&] { return fmt::format("LoRA rank r [default: {}]", d.lora.rank); });
  setting(*g, f, "--lora-alpha,--lora_alpha", "lora_alpha", "LoRA alpha (no memory effect)");
  setting(*g, f, "--lora-dropout,--lora_dropout", "lora_dropout",
          "LoRA dropout (saves masks when > 0)");
  setting(*g, f, "--lora-targets,--target-modules,--target_modules,--lora-target-modules",
          "lora_targets", [&] {
            return "comma-separated: " + help_names(lora_target_vocabulary()) +
                   " [default: q,k,v,o,gate,up,down]";
          });
  switch_flag(*g, f, "--dora,--use-dora,--use_dora", "dora", "true",
              "DoRA: add a magnitude vector per adapted linear");
  setting(*g, f,
          "--modules-to-save,--modules_to_save,--lora-modules-to-save,--lora_modules_to_save",
          "modules_to_save",
          "PEFT modules_to_save: embed_tokens and/or lm_head, each trained as a full copy");
  setting(
      *g, f, "--quant", "quant",
      [&] { return with_default(quant_vocabulary(), name_of(d.quant.kind)); }, quant_vocabulary);
  switch_flag(*g, f, "--no-double-quant", "double_quant", "false", "keep fp32 absmax per block");
  switch_flag(*g, f, "--no-prepare-kbit", "prepare_kbit", "false",
              "skip prepare_model_for_kbit_training's fp32 upcast");
  setting(*g, f, "--train-modules", "train_modules", "freeze: modules that train, e.g. q,v,norm");
  setting(*g, f, "--train-layers", "train_layers",
          "freeze: layers that train; lora/qlora: layers adapted, e.g. 20-27");
  Section pasted(cmd, "Accepted from pasted commands");
  g = &pasted;
  setting(*g, f, "--learning-rate,--learning_rate,--lr", "learning_rate",
          "accepted so an HF command can be pasted; no memory effect");
  setting(*g, f, "--num-train-epochs,--num_train_epochs", "epochs",
          "accepted so an HF command can be pasted; no memory effect");
  add_layout_flags(cmd, f.layout);
}

void add_layout_flags(CLI::App& parent, LayoutFlags& f) {
  Section cmd(parent, "Layout across GPUs");
  // Only the named ones once the command line is known (register_only_named_flags).
  if (wanted("--gpus"))
    cmd.app().add_option("--gpus", f.gpus, "GPUs per node")->capture_default_str();
  if (wanted("--nodes")) cmd.app().add_option("--nodes", f.nodes, "nodes")->capture_default_str();
  if (wanted("--engine"))
    cmd.app().add_option("--engine", f.engine,
                         "ddp | deepspeed | fsdp | megatron (implied by --zero, --fsdp, "
                         "--distributed-optimizer)");
  if (wanted("--zero")) {
    cmd.app().add_option("--zero", f.zero, "DeepSpeed ZeRO stage 0..3");
  }
  if (wanted("--fsdp"))
    cmd.app().add_option("--fsdp", f.fsdp, "PyTorch FSDP: full | grad-op | hybrid | none");
  if (wanted("--fsdp-version"))
    cmd.app().add_option("--fsdp-version", f.fsdp_version, "FSDP 1 or 2")->capture_default_str();
  if (wanted("--tp"))
    cmd.app().add_option("--tp", f.tp, "tensor-parallel size")->capture_default_str();
  if (wanted("--sequence-parallel"))
    cmd.app().add_flag("--sequence-parallel", f.sequence_parallel, "sequence parallel (with --tp)");
  if (wanted("--pp"))
    cmd.app().add_option("--pp", f.pp, "pipeline stages (1F1B)")->capture_default_str();
  if (wanted("--virtual-stages"))
    cmd.app()
        .add_option("--virtual-stages", f.virtual_stages, "interleaved 1F1B chunks per rank")
        ->capture_default_str();
  if (wanted("--cp"))
    cmd.app().add_option("--cp", f.cp, "context-parallel size")->capture_default_str();
  if (wanted("--ep"))
    cmd.app().add_option("--ep", f.ep, "expert-parallel size (MoE)")->capture_default_str();
  if (wanted("--distributed-optimizer"))
    cmd.app().add_flag("--distributed-optimizer", f.distributed_optimizer,
                       "Megatron: shard fp32 master + Adam over data parallel");
  if (wanted("--offload"))
    cmd.app().add_option("--offload", f.offload, "optimizer | params | both");
  if (wanted("--offload-to"))
    cmd.app().add_option("--offload-to", f.offload_to, "cpu | nvme")->capture_default_str();
  if (wanted("--bucket-cap-mb"))
    cmd.app()
        .add_option("--bucket-cap-mb", f.bucket_cap_mb, "DDP bucket_cap_mb")
        ->capture_default_str();
  if (wanted("--gradient-as-bucket-view"))
    cmd.app().add_flag("--gradient-as-bucket-view", f.gradient_as_bucket_view,
                       "DDP: gradients are views into the buckets (no second copy)");
  if (wanted("--reduce-bucket-size"))
    cmd.app().add_option("--reduce-bucket-size", f.reduce_bucket_size,
                         "DeepSpeed reduce_bucket_size in elements (default 5e8)");
  if (wanted("--custom-sharded-layers"))
    cmd.app().add_option("--custom-sharded-layers,--custom_sharded_layers", f.custom_sharded_layers,
                         "FSDP2: modules sharded as units of their own, outside the root "
                         "(torchtune custom_sharded_layers), e.g. tok_embeddings,output");
}

Result<Layout> make_layout(const LayoutFlags& f) {
  Layout l;
  l.gpus_per_node = f.gpus;
  l.nodes = f.nodes;
  l.tp = f.tp;
  l.pp = f.pp;
  l.cp = f.cp;
  l.ep = f.ep;
  l.virtual_stages = f.virtual_stages;
  l.sequence_parallel = f.sequence_parallel;
  l.distributed_optimizer = f.distributed_optimizer;
  l.fsdp_version = f.fsdp_version;
  l.ddp_bucket_cap_mb = f.bucket_cap_mb;
  l.gradient_as_bucket_view = f.gradient_as_bucket_view;
  int engines = 0;
  if (f.zero) {
    l.engine = Engine::deepspeed;
    l.zero_stage = *f.zero;
    ++engines;
  }
  if (!f.fsdp.empty()) {
    auto m = parse_enum(parse_fsdp_mode, f.fsdp, "--fsdp", "full, grad-op, hybrid, none");
    if (!m) return m.error();
    l.engine = Engine::fsdp;
    l.fsdp = m.value();
    ++engines;
  }
  if (f.distributed_optimizer) {
    l.engine = Engine::megatron;
    ++engines;
  }
  if (engines > 1) {
    return Error{ErrorCode::usage, "", "--zero",
                 "--zero, --fsdp and --distributed-optimizer choose different engines: give one"};
  }
  if (!f.engine.empty()) {
    auto e = parse_enum(parse_engine, f.engine, "--engine", "ddp, deepspeed, fsdp, megatron");
    if (!e) return e.error();
    if (engines == 1 && e.value() != l.engine) {
      return Error{ErrorCode::usage, "", "--engine",
                   fmt::format("'{}' contradicts --zero/--fsdp/--distributed-optimizer", f.engine)};
    }
    l.engine = e.value();
  } else if (engines == 0) {
    l.engine = implied_engine(l);
  }
  if (!f.offload.empty()) {
    if (f.offload == "optimizer") {
      l.offload_optimizer = true;
    } else if (f.offload == "params") {
      l.offload_params = true;
    } else if (f.offload == "both") {
      l.offload_optimizer = l.offload_params = true;
    } else {
      return Error{ErrorCode::usage, "", "--offload",
                   fmt::format("'{}' is not one of: optimizer, params, both", f.offload)};
    }
  }
  auto to = parse_enum(parse_offload_target, f.offload_to, "--offload-to", "cpu, nvme");
  if (!to) return to.error();
  l.offload_to = to.value();
  if (!f.reduce_bucket_size.empty()) {
    auto n = parse_count(f.reduce_bucket_size, "--reduce-bucket-size");
    if (!n) return n.error();
    l.deepspeed.reduce_bucket_size = n.value();
  }
  if (auto name = set_separate_units(f.custom_sharded_layers, l.fsdp_knobs)) {
    return Error{ErrorCode::usage, "", "--custom-sharded-layers",
                 fmt::format("'{}' is not a module trainmem shards on its own: give "
                             "tok_embeddings (embed_tokens) or output (lm_head)",
                             *name)};
  }
  if (auto e = validate_layout(l)) return *e;
  return l;
}

void add_device_flags(CLI::App& parent, DeviceFlags& f) {
  CLI::App& cmd = Section(parent, "Device").app();
  cmd.add_option("--memory", f.memory, "device memory, e.g. 32GB or 24GiB");
  cmd.add_option("--gpu", f.gpu,
                 "a device from `trainmem gpus`: its id (rtx-4090) or the name nvidia-smi prints");
  cmd.add_option("--reserve", f.reserve, "memory kept back for the OS or driver, e.g. 2GB");
  add_devices_file_flag(cmd, f);
}

void add_devices_file_flag(CLI::App& cmd, DeviceFlags& f) {
  cmd.add_option("--devices", f.devices,
                 "a JSON file of devices in the schema of data/devices/gpus.json, added to the "
                 "built-in list (a row with a built-in id replaces it); default: "
                 "$TRAINMEM_DEVICES");
}

std::optional<Error> load_user_devices(const DeviceFlags& f) {
  // The flag wins; without it the environment variable names the file.
  const char* env = std::getenv("TRAINMEM_DEVICES");
  const bool from_env = f.devices.empty() && env != nullptr && *env != '\0';
  const std::string path = from_env ? std::string(env) : f.devices;
  if (path.empty()) return std::nullopt;
  auto devices = read_device_file(path);
  if (!devices) {
    Error e = devices.error();
    if (e.field.empty()) e.field = from_env ? "TRAINMEM_DEVICES" : "--devices";
    if (from_env) e.reason += " (the file TRAINMEM_DEVICES names)";
    return e;
  }
  use_user_devices(std::move(devices).value());
  return std::nullopt;
}

void add_output_flags(CLI::App& cmd, OutputFlags& f) {
  cmd.add_flag("--json", f.json, "print JSON (docs/formats.md)");
  cmd.add_option("--units", f.units, "gib | gb | mib | bytes")->capture_default_str();
}

Result<PlanResult> make_plan(const PlanFlags& f) {
  auto plan = plan_from(f.given);
  if (!plan) return plan.error();
  auto layout = make_layout(f.layout);
  if (!layout) return layout.error();
  plan->plan.layout = layout.value();
  if (auto e = validate(plan->plan)) return *e;
  return plan;
}

namespace {

// A training config's layout settings (torchtune's custom_sharded_layers and fsdp_cpu_offload)
// apply under the FSDP2 layout the flags give, unless a flag sets the same thing; otherwise the
// report says they were not applied.
std::optional<Error> apply_layout_settings(const PlanPatch& settings, const LayoutFlags& flags,
                                           Layout& l, std::vector<std::string>& reports) {
  const bool fsdp2 = l.engine == Engine::fsdp && l.fsdp_version == 2;
  for (const PlanSetting& s : settings) {
    if (!fsdp2) {
      reports.push_back(
          fmt::format("--from {} applies to an FSDP2 layout (--gpus N --fsdp "
                      "full); not applied to {}.",
                      s.origin, describe(l)));
      continue;
    }
    if (s.key == "custom_sharded_layers" && flags.custom_sharded_layers.empty()) {
      if (auto name = set_separate_units(s.value, l.fsdp_knobs)) {
        return Error{ErrorCode::bad_input, "", s.origin,
                     fmt::format("'{}' is not a module trainmem shards on its own: "
                                 "tok_embeddings (embed_tokens) or output (lm_head)",
                                 *name)};
      }
    } else if (s.key == "offload" && flags.offload.empty()) {
      l.offload_optimizer = l.offload_params = true;
    }
  }
  return validate_layout(l);
}

// Two different flags that set one setting to different things (--method full --load-in-4bit,
// --bf16 --fp16, --use-cache --no-use-cache): a usage error rather than the later one silently
// winning. Values compare by the term they name, so --precision bf16-mixed --bf16 agree.
std::optional<Error> conflicting_flags(const PlanPatch& given) {
  static const std::map<std::string, const Vocabulary& (*)()> kVocabularies = {
      {"method", method_vocabulary},
      {"precision", precision_vocabulary},
      {"checkpointing", checkpointing_vocabulary},
      {"loss", loss_vocabulary}};
  auto meaning = [](const PlanSetting& s) {
    const auto it = kVocabularies.find(s.key);
    const Term* term = it == kVocabularies.end() ? nullptr : find_term(it->second(), s.value);
    return term != nullptr ? term->name : s.value;
  };
  for (std::size_t i = 0; i < given.size(); ++i) {
    for (std::size_t j = i + 1; j < given.size(); ++j) {
      const PlanSetting& a = given[i];
      const PlanSetting& b = given[j];
      if (a.key != b.key || a.origin == b.origin || meaning(a) == meaning(b)) continue;
      return Error{ErrorCode::usage, "", b.origin,
                   fmt::format("disagrees with {}: one says {} {}, the other {}; give one",
                               a.origin, a.key, meaning(a), meaning(b))};
    }
  }
  return std::nullopt;
}

}  // namespace

Result<ImportedPlan> import_plan(const PlanFlags& f) {
  if (auto e = conflicting_flags(f.given)) return *e;
  ImportedPlan out;
  PlanPatch patch;
  std::vector<std::string> reports;
  // A file the settings importers cannot read may be a distributed config (ds_config.json with
  // "auto" values, torchtitan TOML, a torchrun or Megatron launch script): its error is kept and
  // shown only when the layout importer cannot read it either.
  std::vector<std::optional<Error>> settings_error;
  std::vector<bool> layout_format;  // read as DeepSpeed or accelerate: also gives a layout
  PlanPatch layout_settings;        // what a training config states for the layout (torchtune's)
  std::vector<std::string> texts;   // each file read once, through the guarded reader
  for (const std::string& file : f.from) {
    auto text = read_training_config(file);
    if (!text) return text.error();
    texts.push_back(std::move(text).value());
    auto imported = import_config_text(texts.back(), file);
    if (!imported) {
      // A JSON or YAML mapping no settings format recognises is not a layout config either.
      if (imported.error().file != file || !imported.error().field.empty() ||
          imported.error().reason.rfind("not a config trainmem can read", 0) == 0) {
        return imported.error();
      }
      settings_error.push_back(imported.error());
      continue;
    }
    settings_error.push_back(std::nullopt);
    const ImportedConfig& c = imported.value();
    layout_format.push_back(c.format == "DeepSpeed JSON" || c.format == "accelerate YAML");
    if (!c.model.empty()) out.model = c.model;
    patch.insert(patch.end(), c.patch.begin(), c.patch.end());
    layout_settings.insert(layout_settings.end(), c.layout.begin(), c.layout.end());
    auto list = [](const std::vector<std::string>& items) {
      std::string s;
      for (const std::string& i : items) s += (s.empty() ? "" : "; ") + i;
      return s.empty() ? std::string("none") : s;
    };
    const std::string layout =
        c.for_layout.empty() ? "" : fmt::format(" For the layout: {}.", list(c.for_layout));
    reports.push_back(fmt::format("--from {} read as {}. Used: {}.{} Ignored: {}.", file, c.format,
                                  list(c.used), layout, list(c.ignored)));
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
  // The run's allocator configuration comes from the environment unless a flag gives it, as
  // PyTorch reads it (PYTORCH_ALLOC_CONF, else PYTORCH_CUDA_ALLOC_CONF); before the flags, so
  // that --alloc-conf wins.
  if (auto env = alloc_conf_from_environment()) {
    patch.push_back({"alloc_conf", env->value, env->name, false});
  }
  patch.insert(patch.end(), f.given.begin(), f.given.end());
  for (const PlanSetting& s : patch) {
    if (s.key == "seq") out.seq_origin = s.origin;
  }
  auto plan = plan_from(patch);
  if (!plan) return plan.error();
  out.plan = std::move(plan).value();
  auto layout = make_layout(f.layout);
  if (!layout) return layout.error();
  out.plan.plan.layout = layout.value();
  if (auto e = apply_layout_settings(layout_settings, f.layout, out.plan.plan.layout, reports)) {
    return *e;
  }
  // Distributed configs also give the layout (emit.h). A file only the layout importer reads sets
  // what it says over the flags; one the settings importers read gives its layout only.
  for (std::size_t i = 0, read = 0; i < f.from.size(); ++i) {
    const std::string& file = f.from[i];
    const bool settings_file = !settings_error[i];
    if (settings_file && !layout_format[read++]) continue;
    auto imported =
        import_config(file, texts[i], out.plan.plan, f.layout.gpus > 1 ? f.layout.gpus : 0);
    if (settings_file) {
      if (imported) {
        out.plan.plan.layout = imported->layout;
      } else if (!imported.error().field.empty()) {
        // A layout key with a value no engine runs (ZeRO stage 7, offload to "gpu"): pricing
        // the flags' layout instead would answer for another run.
        return imported.error();
      } else {
        // Its settings were read, so it is no error; but the layout it names is not priced.
        const Error& e = imported.error();
        reports.push_back(fmt::format(
            "--from {}: its layout was not read ({}{}); the GPUs are the "
            "flags' ({}).",
            file, e.field.empty() ? "" : e.field + " ", e.reason, describe(out.plan.plan.layout)));
      }
      continue;
    }
    if (!imported) {
      // Neither importer reads it: a file that is no distributed config keeps the settings
      // importers' message; one that is keeps the layout importer's.
      const bool distributed = imported.error().field.empty() &&
                               imported.error().reason.rfind("not a DeepSpeed", 0) == 0;
      return distributed ? *settings_error[i] : imported.error();
    }
    out.plan.plan = std::move(imported).value();
    reports.push_back(fmt::format("--from {} read for its layout, batch and accumulation.", file));
  }
  if (auto e = validate(out.plan.plan)) return *e;
  out.plan.notes.insert(out.plan.notes.begin(), reports.begin(), reports.end());
  return out;
}

Result<std::optional<Device>> make_device(const DeviceFlags& f) {
  if (auto e = load_user_devices(f)) return *e;
  std::optional<Device> device;
  if (!f.gpu.empty() && !f.memory.empty()) {
    return Error{ErrorCode::usage, "", "--gpu", "give either --gpu or --memory, not both"};
  }
  if (!f.memory.empty()) {
    auto bytes = parse_size(f.memory, "--memory");
    if (!bytes) return bytes.error();
    // Sizes below 1 MiB are a missing unit (--memory 0.4 is 0 bytes), not a device.
    if (bytes.value() < kMiB) {
      return Error{ErrorCode::usage, "", "--memory",
                   fmt::format("'{}' is {} bytes; give a device size with a unit, e.g. 24GB",
                               f.memory, bytes.value())};
    }
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
    auto reserved = with_reserve(*device, bytes.value());
    if (!reserved) return reserved.error();
    device = std::move(reserved).value();
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
  if (auto e = check_plan_for_model(m.value(), settled.plan)) return *e;
  for (std::string& n : plan_notes(m.value(), settled.plan, d->has_value() ? &**d : nullptr))
    settled.notes.push_back(std::move(n));
  std::string seq_origin = p->seq_origin;
  return PricingInputs{std::move(settled.plan), std::move(settled.notes),
                       std::move(d).value(),    o.value(),
                       std::move(m).value(),    std::move(seq_origin)};
}

// The flag that sets a plan field the library names ("lora.rank" -> "--lora-rank"); fields in a
// file, and names that are already flags, are left as they are.
std::string flag_for_field(const std::string& field) {
  // Plan fields are lower-case snake_case paths; anything else (MODEL, an environment variable
  // such as PYTORCH_CUDA_ALLOC_CONF, a flag) is shown as it is.
  const bool plan_field = !field.empty() && std::all_of(field.begin(), field.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
  if (!plan_field) return field;
  static const std::map<std::string, std::string> kSpecial = {
      {"device", "--gpu"},
      {"params_override", "--params"},
      {"quant.kind", "--quant"},
      {"lora.dora", "--dora"},
      {"quant.double_quant", "--no-double-quant"},
      {"quant.prepare_kbit", "--no-prepare-kbit"},
      {"step", "--step"},
      {"freeze.train_modules", "--train-modules"},
      {"freeze.train_layers", "--train-layers"}};
  if (auto it = kSpecial.find(field); it != kSpecial.end()) return it->second;
  std::string flag = "--" + field;
  for (char& c : flag) {
    if (c == '_' || c == '.') c = '-';
  }
  return flag;
}

int report(const Error& error) {
  Error shown = error;
  if (shown.file.empty()) shown.field = flag_for_field(shown.field);
  std::cerr << "trainmem: error: " << shown.message() << "\n";
  return error.code == ErrorCode::usage ? 2 : 1;
}

}  // namespace trainmem::cli

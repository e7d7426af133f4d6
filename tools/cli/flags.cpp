#include "flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "trainmem/emit.h"
#include "trainmem/framework.h"
#include "trainmem/limits.h"
#include "trainmem/units.h"

namespace trainmem::cli {
namespace {

template <class E>
Result<E> parse_enum(std::optional<E> (*parse)(std::string_view), const std::string& text,
                     const std::string& flag, std::string_view accepted) {
  if (auto v = parse(text)) return *v;
  return Error{ErrorCode::usage, "", flag, fmt::format("'{}' is not one of: {}", text, accepted)};
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Result<std::vector<std::int64_t>> parse_layers(const std::string& text) {
  // "0-3,30,31" -> 0,1,2,3,30,31
  std::vector<std::int64_t> out;
  for (const std::string& part : split_list(text)) {
    const auto dash = part.find('-');
    try {
      std::size_t used = 0;
      const std::int64_t first = std::stoll(part.substr(0, dash), &used);
      const std::int64_t last =
          dash == std::string::npos ? first : std::stoll(part.substr(dash + 1));
      if (dash != std::string::npos && dash + 1 >= part.size()) throw std::invalid_argument(part);
      if (first < 0 || last < first) throw std::invalid_argument(part);
      // No loop runs as many times as a typed number: indices stop at the layer cap.
      if (last >= kMaxLayers) {
        return Error{ErrorCode::usage, "", "--train-layers",
                     fmt::format("layer {} is past any model (limit {})", last, kMaxLayers - 1)};
      }
      for (std::int64_t l = first; l <= last; ++l) out.push_back(l);
    } catch (const std::exception&) {
      return Error{ErrorCode::usage, "", "--train-layers",
                   fmt::format("'{}' is not a layer index or range like 0-3", part)};
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

void add_plan_flags(CLI::App& cmd, PlanFlags& f) {
  cmd.add_option("--method", f.method, "full | lora | qlora | freeze")->capture_default_str();
  cmd.add_option("--precision", f.precision,
                 "bf16-mixed | bf16 | fp16-mixed | fp32 | autocast-bf16 (default: the "
                 "framework's, else bf16-mixed)");
  cmd.add_option("--optimizer", f.optimizer,
                 "adamw | adamw-8bit | paged-adamw | paged-adamw-8bit | adafactor | sgd | "
                 "sgd-momentum | lion | adam-mini | muon (default: the framework's, else adamw)");
  cmd.add_option("--optimizer-impl", f.optimizer_impl,
                 "foreach | fused | for-loop (default: the framework's, else foreach)");
  cmd.add_option("--batch", f.batch, "micro-batch per GPU (sequences)")->capture_default_str();
  cmd.add_option("--seq", f.seq, "longest sequence in a batch (tokens)")->capture_default_str();
  cmd.add_option("--grad-accum", f.grad_accum, "micro-batches per optimizer step")
      ->capture_default_str();
  cmd.add_option("--checkpointing", f.checkpointing,
                 "none | full | selective (default: the framework's, else none)");
  cmd.add_option("--attention", f.attention, "eager | sdpa | flash")->capture_default_str();
  cmd.add_option("--loss", f.loss, "full | chunked | fused (default: the framework's, else full)");
  cmd.add_option("--framework", f.framework,
                 "hf | trl | litgpt | torchtune | unsloth | axolotl | mlx, optionally NAME@VERSION "
                 "(docs/frameworks.md)")
      ->capture_default_str();
  cmd.add_option("--versions", f.versions,
                 "library versions whose behaviour differs, e.g. transformers=4.43,"
                 "bitsandbytes=0.41 (default: current releases)");
  cmd.add_flag("--padding-mask", f.padding_mask,
               "batches carry a padding mask (SDPA repeats K/V and takes the masked path)");
  cmd.add_flag("--offload-activations", f.offload_activations,
               "checkpointed layer inputs go to host memory (torchtune, unsloth, axolotl offload)");
  cmd.add_flag(
      "--optimizer-in-backward", f.optimizer_in_backward,
      "step each parameter in backward and free its gradient (torchtune optimizer_in_bwd)");
  cmd.add_flag("--keep-outputs", f.keep_outputs,
               "the training loop keeps the model output (logits) alive through backward");
  cmd.add_option("--convention", f.convention, "exact | textbook")->capture_default_str();
  cmd.add_option("--params", f.params, "price this published parameter count, e.g. 1.54e9");
  cmd.add_option("--lora-rank", f.lora_rank, "LoRA rank r")->capture_default_str();
  cmd.add_option("--lora-alpha", f.lora_alpha, "LoRA alpha (no memory effect)");
  cmd.add_option("--lora-dropout", f.lora_dropout,
                 "LoRA dropout, saves masks when > 0 (default: the framework's, else 0)");
  cmd.add_option("--lora-targets", f.lora_targets,
                 "q,k,v,o,gate,up,down,lm_head,embed | all-linear | attention | mlp; MoE: "
                 "experts,shared_experts,router")
      ->capture_default_str();
  cmd.add_flag("--dora", f.dora, "DoRA: add a magnitude vector per adapted linear");
  cmd.add_option("--quant", f.quant, "QLoRA base: nf4 (default) | fp4 | int8");
  cmd.add_flag("--no-double-quant", f.no_double_quant, "keep fp32 absmax per block");
  cmd.add_flag("--no-prepare-kbit", f.no_prepare_kbit,
               "skip prepare_model_for_kbit_training's fp32 upcast");
  cmd.add_option("--train-modules", f.train_modules, "freeze: modules that train, e.g. q,v,norm");
  cmd.add_option("--train-layers", f.train_layers,
                 "freeze: layers that train; lora/qlora: layers adapted, e.g. 20-27");
  add_layout_flags(cmd, f.layout);
  cmd.add_option("--from", f.from,
                 "read the layout, batch and accumulation from a config: ds_config.json, "
                 "accelerate FSDP YAML, torchtitan TOML, torchrun/Megatron launch script");
}

void add_layout_flags(CLI::App& cmd, LayoutFlags& f) {
  cmd.add_option("--gpus", f.gpus, "GPUs per node")->capture_default_str();
  cmd.add_option("--nodes", f.nodes, "nodes")->capture_default_str();
  cmd.add_option("--engine", f.engine,
                 "ddp | deepspeed | fsdp | megatron (implied by --zero, --fsdp, "
                 "--distributed-optimizer)");
  cmd.add_option("--zero", f.zero, "DeepSpeed ZeRO stage 0..3");
  cmd.add_option("--fsdp", f.fsdp, "PyTorch FSDP: full | grad-op | hybrid | none");
  cmd.add_option("--fsdp-version", f.fsdp_version, "FSDP 1 or 2")->capture_default_str();
  cmd.add_option("--tp", f.tp, "tensor-parallel size")->capture_default_str();
  cmd.add_flag("--sequence-parallel", f.sequence_parallel, "sequence parallel (with --tp)");
  cmd.add_option("--pp", f.pp, "pipeline stages (1F1B)")->capture_default_str();
  cmd.add_option("--virtual-stages", f.virtual_stages, "interleaved 1F1B chunks per rank")
      ->capture_default_str();
  cmd.add_option("--cp", f.cp, "context-parallel size")->capture_default_str();
  cmd.add_option("--ep", f.ep, "expert-parallel size (MoE)")->capture_default_str();
  cmd.add_flag("--distributed-optimizer", f.distributed_optimizer,
               "Megatron: shard fp32 master + Adam over data parallel");
  cmd.add_option("--offload", f.offload, "optimizer | params | both");
  cmd.add_option("--offload-to", f.offload_to, "cpu | nvme")->capture_default_str();
  cmd.add_option("--bucket-cap-mb", f.bucket_cap_mb, "DDP bucket_cap_mb")->capture_default_str();
  cmd.add_flag("--gradient-as-bucket-view", f.gradient_as_bucket_view,
               "DDP: gradients are views into the buckets (no second copy)");
  cmd.add_option("--reduce-bucket-size", f.reduce_bucket_size,
                 "DeepSpeed reduce_bucket_size in elements (default 5e8)");
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
  if (f.zero >= 0) {
    l.engine = Engine::deepspeed;
    l.zero_stage = f.zero;
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
  } else if (engines == 0 && (f.tp > 1 || f.pp > 1 || f.cp > 1 || f.ep > 1)) {
    l.engine = Engine::megatron;  // model parallelism without a DP engine: Megatron-LM
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
  if (auto e = validate_layout(l)) return *e;
  return l;
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

// A flag left empty takes the framework profile's default for the method, else the global one.
std::string with_default(const std::string& given, const TrainingPlan& p, std::string_view flag,
                         std::string_view global) {
  if (!given.empty()) return given;
  const std::string_view d = profile_default(p.framework, name_of(p.method), flag);
  return std::string(d.empty() ? global : d);
}

Result<TrainingPlan> make_plan(const PlanFlags& f) {
  TrainingPlan p;
  if (auto e = parse_framework(f.framework, p.framework, p.library_versions)) return *e;
  if (auto e = parse_library_versions(f.versions, p.library_versions)) return *e;
#define TRAINMEM_PARSE(field, parser, text, flag, accepted) \
  {                                                         \
    auto v = parse_enum(parser, text, flag, accepted);      \
    if (!v) return v.error();                               \
    p.field = v.value();                                    \
  }
  TRAINMEM_PARSE(method, parse_method, f.method, "--method", "full, lora, qlora, freeze")
  const std::string precision = with_default(f.precision, p, "precision", "bf16-mixed");
  const std::string optimizer = with_default(f.optimizer, p, "optimizer", "adamw");
  const std::string optimizer_impl = with_default(f.optimizer_impl, p, "optimizer_impl", "foreach");
  const std::string checkpointing = with_default(f.checkpointing, p, "checkpointing", "none");
  const std::string loss = with_default(f.loss, p, "loss", "full");
  TRAINMEM_PARSE(precision, parse_precision, precision, "--precision",
                 "bf16-mixed, bf16, fp16-mixed, fp32, autocast-bf16")
  TRAINMEM_PARSE(optimizer, parse_optimizer, optimizer, "--optimizer",
                 "adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, adafactor, sgd, "
                 "sgd-momentum, lion, adam-mini, muon")
  TRAINMEM_PARSE(optimizer_impl, parse_optimizer_impl, optimizer_impl, "--optimizer-impl",
                 "foreach, fused, for-loop")
  TRAINMEM_PARSE(checkpointing, parse_checkpointing, checkpointing, "--checkpointing",
                 "none, full, selective")
  TRAINMEM_PARSE(attention, parse_attention, f.attention, "--attention", "eager, sdpa, flash")
  TRAINMEM_PARSE(loss, parse_loss, loss, "--loss", "full, chunked, fused")
  TRAINMEM_PARSE(convention, parse_convention, f.convention, "--convention", "exact, textbook")
  if (!f.quant.empty()) {
    TRAINMEM_PARSE(quant.kind, parse_quant, f.quant, "--quant", "nf4, fp4, int8")
    if (p.method != Method::qlora) {
      return Error{ErrorCode::usage, "", "--quant",
                   fmt::format("applies only to --method qlora, not {}", name_of(p.method))};
    }
  }
#undef TRAINMEM_PARSE
  p.batch = f.batch;
  p.seq = f.seq;
  p.grad_accum = f.grad_accum;
  p.lora.rank = f.lora_rank;
  p.lora.alpha = f.lora_alpha;
  if (f.lora_dropout) {
    p.lora.dropout = *f.lora_dropout;  // validate() refuses NaN and values outside [0, 1)
  } else {
    const std::string_view d = profile_default(p.framework, name_of(p.method), "lora_dropout");
    p.lora.dropout = d.empty() ? 0.0 : std::stod(std::string(d));
  }
  p.lora.targets = split_list(f.lora_targets);
  p.lora.dora = f.dora;
  p.quant.double_quant = !f.no_double_quant;
  p.quant.prepare_kbit = !f.no_prepare_kbit;
  p.freeze.train_modules = split_list(f.train_modules);
  auto layers = parse_layers(f.train_layers);
  if (!layers) return layers.error();
  p.freeze.train_layers = layers.value();
  if (!f.params.empty()) {
    auto n = parse_count(f.params, "--params");
    if (!n) return n.error();
    p.params_override = n.value();
  }
  auto layout = make_layout(f.layout);
  if (!layout) return layout.error();
  p.layout = layout.value();
  // The profile's differences, then the flags that switch a behaviour on.
  apply_framework(p);
  p.behaviour.padding_mask = p.behaviour.padding_mask || f.padding_mask;
  p.behaviour.offload_checkpoints = p.behaviour.offload_checkpoints || f.offload_activations;
  p.behaviour.optimizer_in_backward = p.behaviour.optimizer_in_backward || f.optimizer_in_backward;
  p.behaviour.outputs_kept = p.behaviour.outputs_kept || f.keep_outputs;
  if (auto e = validate(p)) return *e;
  return p;
}

Result<std::optional<Device>> make_device(const DeviceFlags& f) {
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
    device->reserve_bytes = bytes.value();
    if (device->usable_bytes() <= 0) {
      return Error{ErrorCode::usage, "", "--reserve",
                   fmt::format("{} leaves nothing of the device's {}: the usable budget must be "
                               "positive",
                               format_bytes(bytes.value(), Unit::gb),
                               format_bytes(device->capacity_bytes, Unit::gb))};
    }
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
  auto p = make_plan(plan);
  if (!p) return p.error();
  if (!plan.from.empty()) {
    std::ifstream in(plan.from);
    if (!in) return bad_input(plan.from, "--from", "cannot read the file");
    std::stringstream text;
    text << in.rdbuf();
    auto imported = import_config(plan.from, text.str(), p.value(),
                                  plan.layout.gpus > 1 ? plan.layout.gpus : 0);
    if (!imported) return imported.error();
    p = std::move(imported).value();
  }
  auto d = make_device(device);
  if (!d) return d.error();
  auto o = make_render_options(output);
  if (!o) return o.error();
  auto m = load_model(model);
  if (!m) return m.error();
  if (auto e = validate_layout(p->layout, m->spec)) return *e;
  if (auto e = check_plan_matches_model(m.value(), p.value())) return *e;
  if (auto e = check_plan_size(m.value(), p.value())) return *e;
  return PricingInputs{std::move(p).value(), std::move(d).value(), o.value(), std::move(m).value()};
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

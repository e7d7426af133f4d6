#include "flags.h"

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <sstream>

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
      if (first < 0 || last < first || last - first > 100000) throw std::invalid_argument(part);
      for (std::int64_t l = first; l <= last; ++l) out.push_back(l);
    } catch (const std::exception&) {
      return Error{ErrorCode::usage, "", "--train-layers",
                   fmt::format("'{}' is not a layer index or range like 0-3", part)};
    }
  }
  return out;
}

}  // namespace

void add_plan_flags(CLI::App& cmd, PlanFlags& f) {
  cmd.add_option("--method", f.method, "full | lora | qlora | freeze")->capture_default_str();
  cmd.add_option("--precision", f.precision,
                 "bf16-mixed | bf16 | fp16-mixed | fp32 | autocast-bf16")
      ->capture_default_str();
  cmd.add_option("--optimizer", f.optimizer,
                 "adamw | adamw-8bit | paged-adamw | paged-adamw-8bit | adafactor | sgd | "
                 "sgd-momentum | lion | adam-mini | muon")
      ->capture_default_str();
  cmd.add_option("--optimizer-impl", f.optimizer_impl, "foreach | fused | for-loop")
      ->capture_default_str();
  cmd.add_option("--batch", f.batch, "micro-batch per GPU (sequences)")->capture_default_str();
  cmd.add_option("--seq", f.seq, "longest sequence in a batch (tokens)")->capture_default_str();
  cmd.add_option("--grad-accum", f.grad_accum, "micro-batches per optimizer step")
      ->capture_default_str();
  cmd.add_option("--checkpointing", f.checkpointing, "none | full | selective")
      ->capture_default_str();
  cmd.add_option("--attention", f.attention, "eager | sdpa | flash")->capture_default_str();
  cmd.add_option("--loss", f.loss, "full | chunked | fused")->capture_default_str();
  cmd.add_option("--framework", f.framework, "whose allocation behaviour to model")
      ->capture_default_str();
  cmd.add_option("--convention", f.convention, "exact | textbook")->capture_default_str();
  cmd.add_option("--params", f.params, "price this published parameter count, e.g. 1.54e9");
  cmd.add_option("--lora-rank", f.lora_rank, "LoRA rank r")->capture_default_str();
  cmd.add_option("--lora-alpha", f.lora_alpha, "LoRA alpha (no memory effect)");
  cmd.add_option("--lora-dropout", f.lora_dropout, "LoRA dropout (saves masks when > 0)");
  cmd.add_option("--lora-targets", f.lora_targets,
                 "q,k,v,o,gate,up,down,lm_head,embed | all-linear | attention | mlp; MoE: "
                 "experts,shared_experts,router")
      ->capture_default_str();
  cmd.add_flag("--dora", f.dora, "DoRA: add a magnitude vector per adapted linear");
  cmd.add_option("--quant", f.quant, "QLoRA base: nf4 | fp4 | int8")->capture_default_str();
  cmd.add_flag("--no-double-quant", f.no_double_quant, "keep fp32 absmax per block");
  cmd.add_flag("--no-prepare-kbit", f.no_prepare_kbit,
               "skip prepare_model_for_kbit_training's fp32 upcast");
  cmd.add_option("--train-modules", f.train_modules, "freeze: modules that train, e.g. q,v,norm");
  cmd.add_option("--train-layers", f.train_layers,
                 "freeze: layers that train; lora/qlora: layers adapted, e.g. 20-27");
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

Result<TrainingPlan> make_plan(const PlanFlags& f) {
  TrainingPlan p;
#define TRAINMEM_PARSE(field, parser, text, flag, accepted) \
  {                                                         \
    auto v = parse_enum(parser, text, flag, accepted);      \
    if (!v) return v.error();                               \
    p.field = v.value();                                    \
  }
  TRAINMEM_PARSE(method, parse_method, f.method, "--method", "full, lora, qlora, freeze")
  TRAINMEM_PARSE(precision, parse_precision, f.precision, "--precision",
                 "bf16-mixed, bf16, fp16-mixed, fp32, autocast-bf16")
  TRAINMEM_PARSE(optimizer, parse_optimizer, f.optimizer, "--optimizer",
                 "adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, adafactor, sgd, "
                 "sgd-momentum, lion, adam-mini, muon")
  TRAINMEM_PARSE(optimizer_impl, parse_optimizer_impl, f.optimizer_impl, "--optimizer-impl",
                 "foreach, fused, for-loop")
  TRAINMEM_PARSE(checkpointing, parse_checkpointing, f.checkpointing, "--checkpointing",
                 "none, full, selective")
  TRAINMEM_PARSE(attention, parse_attention, f.attention, "--attention", "eager, sdpa, flash")
  TRAINMEM_PARSE(loss, parse_loss, f.loss, "--loss", "full, chunked, fused")
  TRAINMEM_PARSE(convention, parse_convention, f.convention, "--convention", "exact, textbook")
  TRAINMEM_PARSE(quant.kind, parse_quant, f.quant, "--quant", "nf4, fp4, int8")
#undef TRAINMEM_PARSE
  p.batch = f.batch;
  p.seq = f.seq;
  p.grad_accum = f.grad_accum;
  p.framework = f.framework;
  p.lora.rank = f.lora_rank;
  p.lora.alpha = f.lora_alpha;
  p.lora.dropout = f.lora_dropout;
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
  auto p = make_plan(plan);
  if (!p) return p.error();
  auto d = make_device(device);
  if (!d) return d.error();
  auto o = make_render_options(output);
  if (!o) return o.error();
  auto m = load_model(model);
  if (!m) return m.error();
  return PricingInputs{std::move(p).value(), std::move(d).value(), o.value(), std::move(m).value()};
}

// The flag that sets a plan field the library names ("lora.rank" -> "--lora-rank"); fields in a
// file, and names that are already flags, are left as they are.
std::string flag_for_field(const std::string& field) {
  if (field.empty() || field.starts_with("-") || field == "MODEL") return field;
  static const std::map<std::string, std::string> kSpecial = {
      {"device", "--gpu"},
      {"params_override", "--params"},
      {"quant.kind", "--quant"},
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

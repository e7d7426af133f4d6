#include "plan/plan_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "layout/layout.h"
#include "plan/framework.h"
#include "plan/method.h"
#include "trainmem/device.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

// "model.layers.*.self_attn.q_proj.weight" -> "q_proj"; "lm_head.weight" -> "lm_head".
std::string module_name(const std::string& tensor) {
  std::string stem = tensor;
  const auto dot = stem.rfind('.');
  if (dot != std::string::npos) stem = stem.substr(0, dot);  // drop ".weight"
  const auto prev = stem.rfind('.');
  return prev == std::string::npos ? stem : stem.substr(prev + 1);
}

bool candidate(const TensorGroup& g) {
  return !g.mtp && !g.is_bias && g.shape.size() == 2 && g.adapter == AdapterPart::none;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// bf16-mixed prices fp32 parameters, as from_pretrained gives them with dtype=torch.float32, or
// with no dtype before transformers 5. Since 5.0 dtype="auto" is the default (transformers PR
// #42805, modeling_utils.py from_pretrained): a 16-bit checkpoint loads in its own dtype unless
// the script asks for float32, and the Trainer's bf16=True then autocasts over bf16 parameters.
// The estimate keeps the recipe asked for (the larger figure); the note names the other one.
std::optional<std::string> bf16_mixed_loading_note(const LoadedModel& model,
                                                   const TrainingPlan& plan) {
  if (plan.precision != Precision::autocast_bf16) return std::nullopt;
  // DeepSpeed and FSDP run bf16-mixed as 16-bit weights with an fp32 master copy in the
  // optimizer (with_engine_precision), and the layout's own note says so: how from_pretrained
  // loads the model does not set what they hold.
  if (engine_keeps_master(plan.layout)) return std::nullopt;
  if (!runs_transformers_models(plan.framework)) return std::nullopt;  // hf, trl, axolotl, unsloth
  std::string transformers;
  for (const auto& [library, version] : plan.library_versions) {
    if (library == "transformers") transformers = version;
  }
  const bool auto_dtype = transformers.empty() || compare_versions(transformers, "5.0") >= 0;
  const Dtype stored = model.spec.storage_dtype;
  // An fp16 checkpoint would train fp16 parameters under bf16 autocast, which no recipe here
  // names: the note is for bf16 checkpoints only.
  const bool sixteen = stored == Dtype::bf16;
  const bool frozen_base = plan.method == Method::lora || plan.method == Method::freeze;
  if (!auto_dtype) {
    if (!frozen_base) return std::nullopt;
    return "bf16-mixed (HF bf16=True) keeps the frozen base in fp32, as from_pretrained does "
           "without torch_dtype before transformers 5; PEFT recipes usually load it with "
           "torch_dtype=torch.bfloat16, which is --precision bf16 (bf16 base, fp32 adapters).";
  }
  if (!sixteen || (!frozen_base && plan.method != Method::full)) return std::nullopt;
  const std::string_view dtype = dtype_name(stored);
  return fmt::format(
      "bf16-mixed prices {} in fp32, as from_pretrained(dtype=torch.float32) loads {}; given no "
      "dtype, transformers >= 5 loads the checkpoint's own {} (dtype=\"auto\", its default since "
      "5.0), and the Trainer's bf16=True then autocasts over {} parameters: that is --precision "
      "bf16 ({}), which prices less (on transformers 4, give --versions transformers=4.57).",
      frozen_base ? "the frozen base" : "the weights, their gradients and AdamW states",
      frozen_base ? "it" : "them", dtype, dtype,
      frozen_base ? "bf16 base, fp32 adapters" : "bf16 weights, gradients and states");
}

}  // namespace

std::vector<std::string> linear_module_names(const LoadedModel& model) {
  std::vector<std::string> out;
  bool routed = false;
  for (const TensorGroup& g : model.inventory.groups) {
    if (!candidate(g) || g.role == Role::embedding || g.role == Role::position_embedding) continue;
    // Routed experts are 3-D parameters in transformers v5, which target_modules names do not
    // reach (the MoE note): they are listed as the one target that does, 'experts'.
    if (g.expert == ExpertKind::routed) {
      routed = true;
      continue;
    }
    // The router is a module named "gate" in Qwen-MoE and Mixtral, which the target 'gate' (the
    // MLP's gate_proj) does not mean: it is named with the target that reaches it.
    const std::string name = g.role == Role::router
                                 ? module_name(g.name) + " (the router: 'router')"
                                 : module_name(g.name);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  // Tied embeddings: PEFT can still target lm_head, which shares the embedding matrix.
  if (std::find(out.begin(), out.end(), "lm_head") == out.end()) out.emplace_back("lm_head");
  if (routed) out.emplace_back("experts (the routed experts)");
  return out;
}

std::vector<std::string> unmatched_targets(const LoadedModel& model, const TrainingPlan& plan) {
  const bool adapters = plan.method == Method::lora || plan.method == Method::qlora;
  const bool freeze = plan.method == Method::freeze;
  std::vector<std::string> out;
  if (!adapters && !freeze) return out;
  for (const std::string& name : adapters ? plan.lora.targets : plan.freeze.train_modules) {
    if (name == "lm_head") continue;  // every causal LM has a head (tied or not)
    const std::vector<std::string> one{name};
    const bool reached = std::any_of(
        model.inventory.groups.begin(), model.inventory.groups.end(), [&](const TensorGroup& g) {
          return (freeze || candidate(g)) && !g.mtp &&
                 targets_group(one, g, plan.behaviour.experts_as_linears);
        });
    if (!reached) out.push_back(name);
  }
  return out;
}

std::optional<Error> check_targets(const LoadedModel& model, const TrainingPlan& plan) {
  const bool adapters = plan.method == Method::lora || plan.method == Method::qlora;
  const bool freeze = plan.method == Method::freeze;
  if (!adapters && !freeze) return std::nullopt;
  const std::vector<std::string>& names = adapters ? plan.lora.targets : plan.freeze.train_modules;
  // As PEFT does (tuners_utils.py inject_adapter: "Target modules ... not found in the base
  // model"): an error when no name matches; names that match nothing beside others that do are
  // a note (unmatched_targets).
  if (names.empty() || unmatched_targets(model, plan).size() < names.size()) return std::nullopt;
  std::string listed;
  for (const std::string& n : names) listed += (listed.empty() ? "'" : ", '") + n + "'";
  return Error{ErrorCode::bad_input, "", adapters ? "--lora-targets" : "--train-modules",
               fmt::format("{} match{} no module of {}; its linear modules are: {}", listed,
                           names.size() == 1 ? "es" : "", model.spec.name,
                           joined(linear_module_names(model)))};
}

std::optional<Error> check_checkpoint_quant(const LoadedModel& model, const TrainingPlan& plan) {
  const std::optional<CheckpointQuant>& q = model.spec.checkpoint_quant;
  if (!q || q->method != "bitsandbytes") return std::nullopt;
  const std::string saved =
      fmt::format("{} is saved quantised (config.json quantization_config: bitsandbytes {}{})",
                  model.spec.name, q->storage, q->double_quant ? " with double quantisation" : "");
  const std::string flags =
      fmt::format("--method qlora --quant {}{}", q->storage,
                  q->storage != "int8" && !q->double_quant ? " --no-double-quant" : "");
  // transformers trainer.py Trainer.__init__ refuses a quantised model without adapters ("You
  // cannot perform fine-tuning on purely quantized models").
  if (plan.method == Method::full || plan.method == Method::freeze) {
    return bad_input("", "--method",
                     fmt::format("{}: transformers' Trainer refuses to train a quantised model "
                                 "without adapters; price LoRA on it with {}",
                                 saved, flags));
  }
  // from_pretrained quantises as the config says whatever the training code asks, so LoRA on
  // this checkpoint is QLoRA, with the config's storage.
  const std::string_view planned = plan.quant.kind == QuantKind::nf4   ? "nf4"
                                   : plan.quant.kind == QuantKind::fp4 ? "fp4"
                                                                       : "int8";
  const bool same = plan.method == Method::qlora && planned == q->storage &&
                    (q->storage == "int8" || plan.quant.double_quant == q->double_quant);
  if (same) return std::nullopt;
  return bad_input(
      "", plan.method == Method::qlora ? "--quant" : "--method",
      fmt::format("{}: from_pretrained loads it quantised whatever the training code asks, which "
                  "makes LoRA on it QLoRA; price it with {}",
                  saved, flags));
}

namespace {

// A checkpoint quantised by a method trainmem does not price (config.json quantization_config):
// the weights are priced at torch_dtype, and the note says which side of the truth that is.
std::string checkpoint_quant_note(const CheckpointQuant& q, Dtype storage) {
  const std::string_view dtype = dtype_name(storage);
  // transformers quantizers/quantizer_mxfp4.py: training needs Mxfp4Config(dequantize=True), which
  // loads the weights at torch_dtype, as the gpt-oss fine-tuning recipes do.
  if (q.method == "mxfp4") {
    return fmt::format(
        "config.json's quantization_config (mxfp4) is priced dequantised to {}: training loads "
        "it with Mxfp4Config(dequantize=True), as the gpt-oss fine-tuning recipes do.",
        dtype);
  }
  // GPTQ and AWQ checkpoints load packed (int32 words of 4-bit values plus group scales), so a
  // LoRA on them holds far less than a dense copy (quantizers/quantizer_gptq.py, _awq.py).
  if (q.method == "gptq" || q.method == "awq") {
    return fmt::format(
        "config.json's quantization_config ({}) is not priced: the weights are priced as a dense "
        "{} copy, while from_pretrained keeps them packed (about a quarter of that at 4 bits, "
        "plus group scales), so this over-states the weights of a LoRA on this checkpoint.",
        q.method, dtype);
  }
  return fmt::format(
      "config.json's quantization_config ({}) is not priced: the weights are priced as {} "
      "(torch_dtype); training on the {} weights themselves differs.",
      q.method, dtype, q.method);
}

}  // namespace

std::vector<std::string> plan_notes(const LoadedModel& model, const TrainingPlan& plan,
                                    const Device* device) {
  std::vector<std::string> out;
  if (const auto& q = model.spec.checkpoint_quant; q && q->method != "bitsandbytes") {
    out.push_back(checkpoint_quant_note(*q, model.spec.storage_dtype));
  }
  if (const auto unmatched = unmatched_targets(model, plan);
      !unmatched.empty() && plan.convention == Convention::exact) {
    out.push_back(fmt::format(
        "Targets {} match no module of {} (PEFT skips them too); the others are adapted. Its "
        "linear modules: {}.",
        joined(unmatched), model.spec.name, joined(linear_module_names(model))));
  }
  const std::int64_t context = model.spec.max_positions;
  if (context > 0 && plan.seq > context) {
    out.push_back(fmt::format(
        "--seq {} is longer than the model's context (max_position_embeddings {}): priced as "
        "asked, but positions past {} were never trained (RoPE scaling or a longer-context model "
        "is the usual answer).",
        plan.seq, context, context));
  }
  if (auto n = bf16_mixed_loading_note(model, plan)) out.push_back(std::move(*n));
  // Remote code that picks its attention class from config.json (InternLM2) runs what it says:
  // eager attention materialises every score matrix, which the sdpa default does not price.
  if (model.spec.config_attention == "eager" && plan.attention != Attention::eager &&
      plan.convention == Convention::exact) {
    out.push_back(fmt::format(
        "config.json sets attn_implementation \"eager\", and {}'s own modeling code picks its "
        "attention class from it: priced here as {}; --attention eager prices the score matrices "
        "that run holds.",
        model.spec.model_type, name_of(plan.attention)));
  }
  // Gemma 2 and gpt-oss declare _supports_sdpa = False (soft-capping, attention sinks): asked for
  // sdpa, transformers runs eager attention, and that is what the activations price.
  if (!model.spec.sdpa_supported && plan.attention == Attention::sdpa &&
      plan.convention == Convention::exact) {
    out.push_back(fmt::format(
        "transformers has no SDPA attention for {} (_supports_sdpa = False): asked for sdpa it "
        "runs eager attention, which keeps every score matrix, and that is priced; --attention "
        "flash prices a FlashAttention kernel (attn_implementation \"flash_attention_2\" or a "
        "kernels-hub build) instead.",
        model.spec.model_type));
  }
  if (device == nullptr) return out;
  const bool apple = device->kind == DeviceKind::unified;
  if (plan.attention == Attention::flash) {
    // FlashAttention-2 needs an Ampere or newer NVIDIA GPU (flash-attn README: sm80+); it has no
    // Apple (MPS) build. An AMD architecture name ("gfx942") is no CUDA compute capability: the
    // flash-attn README lists a ROCm build for MI200/MI300.
    const std::string& cc = device->compute_capability;
    const bool cuda_cc = !cc.empty() && std::isdigit(static_cast<unsigned char>(cc[0]));
    const bool old_cuda = cuda_cc && std::strtod(cc.c_str(), nullptr) < 8.0;
    if (apple || old_cuda) {
      out.push_back(fmt::format(
          "--attention flash: FlashAttention-2 does not run on {} ({}); transformers falls back "
          "to sdpa or eager, which this estimate does not price: use --attention sdpa.",
          device->name, apple ? "no CUDA" : "compute capability " + cc + " < 8.0"));
    }
  }
  if (plan.method == Method::qlora && apple) {
    out.push_back(fmt::format(
        "QLoRA on {}: bitsandbytes' 4-bit kernels need CUDA (no MPS backend), so this plan does "
        "not run there as priced; MLX's own QLoRA quantises differently.",
        device->name));
  }
  return out;
}

}  // namespace trainmem

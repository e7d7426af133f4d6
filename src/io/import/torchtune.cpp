// torchtune recipe YAML (recipes/configs/*: model._component_, model.lora_rank,
// model.lora_attn_modules, optimizer._component_, dtype, enable_activation_checkpointing, ...).
// torchtune trains in the model's dtype with no autocast: dtype bf16 is pure bf16.
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {

namespace {

// The model a torchtune builder builds (torchtune/models/<family>/_model_builders.py: llama3_1_8b,
// lora_llama3_1_8b, qlora_qwen2_5_1_5b_instruct, ...), as the preset of the same tensor shapes.
// Llama 3.3 70B has Llama 3.1 70B's shapes. A builder not listed names no model: the command
// line's model argument then does, or its absence is the usual "name a model" error.
std::optional<std::string> builder_model(const std::string& component) {
  std::string b = component.substr(component.rfind('.') + 1);
  for (const char* prefix : {"qlora_", "lora_", "dora_"}) {
    if (b.rfind(prefix, 0) == 0) b = b.substr(std::string(prefix).size());
  }
  for (const char* suffix : {"_base", "_instruct"}) {
    const std::string s(suffix);
    if (b.size() > s.size() && b.compare(b.size() - s.size(), s.size(), s) == 0) {
      b.resize(b.size() - s.size());
    }
  }
  static constexpr std::pair<std::string_view, std::string_view> kBuilders[] = {
      {"llama3_8b", "meta-llama/Meta-Llama-3-8B"},
      {"llama3_70b", "meta-llama/Meta-Llama-3-70B"},
      {"llama3_1_8b", "llama-3.1-8b"},
      {"llama3_1_70b", "llama-3.1-70b"},
      {"llama3_3_70b", "llama-3.1-70b"},
      {"llama3_2_1b", "llama-3.2-1b"},
      {"llama3_2_3b", "llama-3.2-3b"},
      {"qwen2_5_0_5b", "qwen2.5-0.5b"},
      {"qwen2_5_1_5b", "qwen2.5-1.5b"},
      {"qwen2_5_3b", "qwen2.5-3b"},
      {"qwen2_5_7b", "qwen2.5-7b"},
      {"qwen2_5_14b", "qwen2.5-14b"},
      {"qwen2_5_32b", "qwen2.5-32b"},
      {"qwen2_5_72b", "qwen2.5-72b"},
      {"qwen3_0_6b", "qwen3-0.6b"},
      {"qwen3_1_7b", "qwen3-1.7b"},
      {"qwen3_4b", "qwen3-4b"},
      {"qwen3_8b", "qwen3-8b"},
      {"qwen3_14b", "qwen3-14b"},
      {"qwen3_32b", "qwen3-32b"},
      {"gemma_2b", "gemma-2b"},
      {"gemma2_9b", "gemma-2-9b"},
      {"mistral_7b", "mistral-7b-v0.1"},
      {"phi3_mini", "phi-3-mini-4k-instruct"},
      {"phi4_14b", "phi-4"},
  };
  for (const auto& [builder, model] : kBuilders) {
    if (b == builder) return std::string(model);
  }
  return std::nullopt;
}

// The optimizer a recipe's optimizer._component_ builds, by its class name; a class not listed
// passes through as written, and the plan refuses it naming the key (it was priced as AdamW).
std::optional<std::string> optimizer_of_component(const std::string& component) {
  // bitsandbytes' 32-bit classes keep fp32 states whatever the parameters' dtype
  // (bitsandbytes/optim/optimizer.py Optimizer1State/Optimizer2State.init_state); torch's and
  // lion-pytorch's keep them like the parameter.
  static const std::pair<std::string_view, std::string_view> kBitsandbytes[] = {
      {"AdamW", "adamw-32bit"},
      {"AdamW32bit", "adamw-32bit"},
      {"Lion", "lion-32bit"},
      {"Lion32bit", "lion-32bit"},
      {"PagedLion", "paged-lion"},
      {"PagedLion32bit", "paged-lion"},
      {"PagedLion8bit", "paged-lion-8bit"},
  };
  static const std::pair<std::string_view, std::string_view> kClasses[] = {
      {"AdamW", "adamw"},
      {"Adam", "adamw"},  // the same two states per parameter
      {"SGD", "sgd"},
      {"AdamW8bit", "adamw-8bit"},  // bitsandbytes.optim and torchao.optim
      {"PagedAdamW", "paged-adamw"},
      {"PagedAdamW8bit", "paged-adamw-8bit"},
      {"PagedAdamW32bit", "paged-adamw"},
      {"Adafactor", "adafactor"},
      {"Lion", "lion"},  // lion_pytorch.Lion
      {"Lion8bit", "lion-8bit"},
  };
  const std::size_t dot = component.rfind('.');
  const std::string_view name = dot == std::string::npos
                                    ? std::string_view(component)
                                    : std::string_view(component).substr(dot + 1);
  if (component.starts_with("bitsandbytes.")) {
    for (const auto& [cls, optimizer] : kBitsandbytes) {
      if (name == cls) return std::string(optimizer);
    }
  }
  for (const auto& [cls, optimizer] : kClasses) {
    if (name == cls) return std::string(optimizer);
  }
  return component;
}

}  // namespace

const ImportFormat& torchtune_format() {
  using namespace rules;
  static const ImportFormat f{
      "torchtune YAML",
      [](const FlatConfig& c) {
        return has(c, "model._component_") || has(c, "optimizer._component_") ? 10 : 0;
      },
      {{"model._component_", "method",
        [](const std::string& v) -> std::optional<std::string> {
          if (v.find(".qlora_") != std::string::npos) return "qlora";
          if (v.find(".lora_") != std::string::npos) return "lora";
          return "full";
        },
        ""},
       {"model._component_", "model", builder_model, ""},
       same("model.lora_rank", "lora_rank"),
       same("model.lora_alpha", "lora_alpha"),
       same("model.lora_dropout", "lora_dropout"),
       same("model.lora_attn_modules", "lora_targets"),
       same("batch_size", "batch"),
       same("gradient_accumulation_steps", "grad_accum"),
       // recipes read cfg.get("enable_activation_checkpointing", False): false turns off the
       // profile's default of on.
       on_off("enable_activation_checkpointing", "checkpointing", "full", "none"),
       // training/precision.py PRECISION_STR_TO_DTYPE: bf16 and fp32 train whole in that dtype
       // (the recipes refuse fp16); any other value reaches the plan and is refused there.
       same("dtype", "precision"),
       {"optimizer._component_", "optimizer", optimizer_of_component, ""},
       {"optimizer.fused", "optimizer_impl",
        [](const std::string& v) { return if_true(v, "fused"); }, ""},
       // torchtune tokenizers' max_seq_len: Optional[int] = None truncates nothing
       // (models/llama3/_tokenizer.py Llama3Tokenizer.tokenize_messages).
       sequence_limit("tokenizer.max_seq_len"),
       {"loss._component_", "loss",
        [](const std::string&) -> std::optional<std::string> {
          // CEWithChunkedOutputLoss is the torchtune profile's own loss (8 chunks from torchtune
          // 0.3: the loss_chunks knob, src/plan/framework.cpp), priced on the full-loss path.
          // LinearCrossEntropyLoss is the same memory: it runs the output projection per chunk
          // (num_output_chunks 8) and `cross_entropy(logits.float())` on each with no
          // checkpoint, so every chunk's fp32 log_softmax stays saved for backward
          // (torchtune@bd2a0fc modules/loss/cross_entropy_loss.py compute_cross_entropy, forward).
          // It is not TRL's chunked loss, which recomputes each chunk and makes an fp32 weight
          // copy. It drops ignored tokens first, so the full count is an upper bound.
          return "full";
        },
        ""},
       // The recipes' cfg.compile (model and loss: torchtune@30b8519e
       // recipes/lora_finetune_single_device.py:239,274-275, full_finetune_single_device.py:
       // 211,234-235), cfg.enable_activation_offloading (lora_finetune_single_device.py:159-160)
       // and cfg.optimizer_in_bwd (full_finetune_single_device.py:122).
       when_true("compile", "compile", "true"),
       when_true("enable_activation_offloading", "offload_activations", "true"),
       // Both ways: the full recipes' profile steps in backward by default, and a config's
       // optimizer_in_bwd: False turns that off.
       on_off("optimizer_in_bwd", "optimizer_in_backward", "true", "false"),
       same("optimizer.lr", "learning_rate"),
       same("epochs", "epochs")},
      // apply_lora_to_mlp / apply_lora_to_output extend lora_attn_modules
      // (torchtune/models/*/_component_builders.py lora_*: w1, w2, w3 and output).
      [](const FlatConfig& c, ImportedConfig& out) {
        // A torchtune recipe file is run by torchtune's recipes: their profile (docs/frameworks.md,
        // torchtune: the chunked fp32 loss, `del logits`, adapters in the model dtype).
        out.patch.insert(out.patch.begin(),
                         {"framework", "torchtune", out.file + ": (a torchtune recipe)", true});
        for (const auto& [key, extra] :
             {std::pair<std::string, std::string>{"model.apply_lora_to_mlp", "gate,up,down"},
              {"model.apply_lora_to_output", "lm_head"}}) {
          const auto it = c.find(key);
          if (it == c.end()) continue;
          std::erase(out.ignored, key);  // read here, whatever its value
          if (!is_true(it->second)) {
            out.used.push_back(key + " = " + it->second + " (no change)");
            continue;
          }
          bool extended = false;
          for (PlanSetting& s : out.patch) {
            if (s.key != "lora_targets") continue;
            s.value += "," + extra;
            extended = true;
          }
          if (!extended) out.patch.push_back({"lora_targets", extra, out.file + ": " + key, true});
          out.used.push_back(key + " = true -> lora_targets +" + extra);
        }
        // The distributed recipes' FSDP2 settings (torchtune@30b8519e
        // recipes/full_finetune_distributed.py: cfg.custom_sharded_layers, cfg.fsdp_cpu_offload
        // into training.shard_model): layout settings, applied under an FSDP2 layout.
        const auto units = c.find("custom_sharded_layers");
        if (units != c.end() && !io::is_unset(units->second)) {
          out.layout.push_back(
              {"custom_sharded_layers", units->second, out.file + ": custom_sharded_layers", true});
          out.used.push_back("custom_sharded_layers = " + units->second +
                             " -> layout custom_sharded_layers (with --fsdp, FSDP2)");
          std::erase(out.ignored, std::string("custom_sharded_layers"));
        }
        const auto offload = c.find("fsdp_cpu_offload");
        if (offload != c.end()) {
          if (is_true(offload->second)) {
            out.layout.push_back({"offload", "both", out.file + ": fsdp_cpu_offload", true});
            out.used.push_back("fsdp_cpu_offload = True -> layout offload both (with --fsdp)");
          } else {
            out.used.push_back("fsdp_cpu_offload = " + offload->second + " (no change)");
          }
          std::erase(out.ignored, std::string("fsdp_cpu_offload"));
        }
      }};
  return f;
}

}  // namespace trainmem::io

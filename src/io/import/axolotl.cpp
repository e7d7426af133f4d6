// axolotl YAML (axolotl/utils/schemas/config.py: base_model, adapter, sequence_len,
// micro_batch_size, lora_target_linear, flash_attention, ...).
#include <fmt/format.h>

#include <string>

#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {
namespace {

bool positive(const FlatConfig& c, const std::string& key) {
  const auto it = c.find(key);
  if (it == c.end() || is_unset(it->second)) return false;
  try {
    return std::stod(it->second) > 0;
  } catch (const std::exception&) {
    return false;
  }
}

// axolotl evaluates between steps when it has evaluation data (val_set_size > 0 or
// test_datasets) and an interval: eval_steps, evals_per_epoch (turned into eval_steps) or
// eval_strategy (axolotl v0.18.0 core/builders/base.py:514-524 _configure_save_and_eval_strategy;
// utils/config/__init__.py:250-251); its eval batch defaults to micro_batch_size, not the HF 8
// (utils/config/__init__.py:208-209).
void finish_evaluation(const FlatConfig& c, ImportedConfig& out) {
  using rules::has;
  using rules::has_prefix;
  const bool data = positive(c, "val_set_size") || has_prefix(c, "test_datasets");
  if (!data) return;
  std::string strategy;
  if (positive(c, "eval_steps") || positive(c, "evals_per_epoch")) {
    strategy = "steps";
  } else if (has(c, "eval_strategy") && !is_unset(c.at("eval_strategy"))) {
    strategy = c.at("eval_strategy");
  }
  if (strategy.empty() || strategy == "no") return;
  const std::string origin = out.file + ": val_set_size";
  out.patch.push_back({"eval_strategy", strategy, origin, true});
  std::string batch = "from eval_batch_size";
  if (!has(c, "eval_batch_size") && has(c, "micro_batch_size")) {
    out.patch.push_back({"eval_batch", c.at("micro_batch_size"),
                         out.file + ": micro_batch_size (axolotl's eval_batch_size default)",
                         true});
    batch = "eval_batch " + c.at("micro_batch_size") +
            " (eval_batch_size defaults to micro_batch_size)";
  }
  out.used.push_back(
      fmt::format("evaluation data with an interval -> eval_strategy {}, {}", strategy, batch));
}

// lora_target_linear adds every linear module to lora_target_modules (axolotl
// loaders/adapter.py load_lora: list(set(lora_target_modules + find_all_linear_names(model)))),
// so the two together are their union, not the later key's list; neither is PEFT's default.
void finish_targets(const FlatConfig& c, ImportedConfig& out) {
  const bool linear = rules::has(c, "lora_target_linear") && is_true(c.at("lora_target_linear"));
  const bool listed = rules::has(c, "lora_target_modules") &&
                      !is_unset(c.at("lora_target_modules")) &&
                      !c.at("lora_target_modules").empty();
  if (linear && listed) {
    std::erase_if(out.patch, [](const PlanSetting& s) { return s.key == "lora_targets"; });
    out.patch.push_back({"lora_targets", "all-linear," + c.at("lora_target_modules"),
                         out.file + ": lora_target_linear with lora_target_modules", true});
    out.used.push_back("lora_target_linear with lora_target_modules -> their union");
  }
  rules::peft_default_targets(out);
}

// axolotl's attention backends as trainmem prices them: eager materialises the score matrix,
// sdpa is torch's kernel, and every other one (FlashAttention, flex_attention, xformers'
// memory-efficient kernel, SageAttention, a hub flash kernel) is a fused kernel that saves the
// output and the row log-sum-exp, not the scores: what --attention flash prices. A value none of
// them is passed on, and the vocabulary refuses it naming the file and key.
std::optional<std::string> axolotl_attention(const std::string& v) {
  if (v == "eager" || v == "sdpa") return v;
  for (const char* fused : {"flash", "flex_attention", "xformers", "sage", "fp8"}) {
    if (v.find(fused) != std::string::npos) return std::string("flash");
  }
  return v;
}

// bf16: auto is bf16 on every card that has it (utils/config/__init__.py: auto becomes
// is_torch_bf16_gpu_available()), which the rule above cannot say: "auto" reads as unset.
void finish_precision(const FlatConfig& c, ImportedConfig& out) {
  if (!rules::has(c, "bf16") || c.at("bf16") != "auto") return;
  if (rules::has(c, "bfloat16") && is_true(c.at("bfloat16"))) return;
  out.patch.push_back({"precision", "bf16", out.file + ": bf16", true});
  std::erase(out.used, std::string("bf16 = auto (no change)"));
  out.used.push_back("bf16 = auto -> precision bf16 (the model loads in bf16 on a bf16 card)");
}

}  // namespace

const ImportFormat& axolotl_format() {
  using namespace rules;
  static const ImportFormat f{
      "axolotl YAML",
      [](const FlatConfig& c) {
        int score = 0;
        for (const char* k : {"base_model", "sequence_len", "micro_batch_size", "adapter",
                              "lora_target_linear", "sample_packing", "datasets.path"}) {
          score += has(c, k) ? 2 : 0;
        }
        return score;
      },
      {same("base_model", "model"),
       same("adapter", "method"),
       when_true("load_in_4bit", "method", "qlora"),
       when_true("load_in_8bit", "method", "qlora"),
       when_true("load_in_8bit", "quant", "int8"),
       same("lora_r", "lora_rank"),
       same("lora_alpha", "lora_alpha"),
       same("lora_dropout", "lora_dropout"),
       same("lora_target_modules", "lora_targets"),
       same("lora_modules_to_save", "modules_to_save"),
       when_true("lora_target_linear", "lora_targets", "all-linear"),
       when_true("peft_use_dora", "dora", "true"),
       same("sequence_len", "seq"),
       same("micro_batch_size", "batch"),
       same("gradient_accumulation_steps", "grad_accum"),
       {"gradient_checkpointing", "checkpointing",
        [](const std::string& v) -> std::optional<std::string> {
          // true, or "unsloth"/"offload" variants that still recompute every layer.
          if (is_false(v)) return "none";
          return "full";
        },
        ""},
       // "offload" and "offload_disk" (and the older "unsloth") also move the checkpointed inputs
       // off the GPU: schemas/validation.py check_gradient_checkpointing_w_offload sets
       // activation_offloading.
       {"gradient_checkpointing", "offload_activations",
        [](const std::string& v) -> std::optional<std::string> {
          if (v == "offload" || v == "offload_disk" || v == "unsloth") return "true";
          return std::nullopt;
        },
        ""},
       // activation_offloading: true, legacy, disk or hidden_states (schemas/config.py); it
       // requires gradient_checkpointing (validation.py check_activation_offloading_wo_gc).
       {"activation_offloading", "offload_activations",
        [](const std::string& v) -> std::optional<std::string> {
          if (v == "false") return std::nullopt;
          return "true";
        },
        ""},
       // bf16 (true, or auto on a bf16 card: finish_precision) and bfloat16 load the model in bf16
       // (utils/config/__init__.py normalize_config: cfg.torch_dtype = torch.bfloat16;
       // loaders/model.py passes it to from_pretrained), so the Trainer's bf16 autocast runs over
       // bf16 weights, gradients and states: --precision bf16, not the fp32 weights of
       // bf16-mixed. fp16 loads fp16 weights, which has no precision of its own here: fp16-mixed
       // prices them in fp32 (an over-estimate of the weights).
       when_true("bf16", "precision", "bf16"),
       when_true("bfloat16", "precision", "bf16"),
       when_true("fp16", "precision", "fp16-mixed"),
       same("optimizer", "optimizer"),
       // attn_implementation is axolotl's canonical key (schemas/config.py: eager, sdpa,
       // flash_attention_2/3, flex_attention, xformers, sage, fp8, or a hub kernel path); the
       // booleans below are its deprecated spellings.
       {"attn_implementation", "attention", axolotl_attention, ""},
       when_true("flash_attention", "attention", "flash"),
       when_true("sdp_attention", "attention", "sdpa"),
       when_true("eager_attention", "attention", "eager"),
       when_true("flex_attention", "attention", "flash"),
       when_true("xformers_attention", "attention", "flash"),
       when_true("sage_attention", "attention", "flash"),
       when_true("liger_fused_linear_cross_entropy", "loss", "fused"),
       when_true("cut_cross_entropy", "loss", "chunked"),
       // axolotl passes torch_compile to the HF TrainingArguments (core/builders: torch_compile).
       when_true("torch_compile", "compile", "true"),
       same("eval_batch_size", "eval_batch"),
       // Read together in the finish step below.
       {"val_set_size", "", [](const std::string&) { return std::optional<std::string>(); }, ""},
       {"eval_steps", "", [](const std::string&) { return std::optional<std::string>(); }, ""},
       {"evals_per_epoch", "", [](const std::string&) { return std::optional<std::string>(); }, ""},
       {"eval_strategy", "", [](const std::string&) { return std::optional<std::string>(); }, ""},
       same("learning_rate", "learning_rate"),
       same("num_epochs", "epochs"),
       not_priced("sample_packing", "packing changes sequence lengths, not the longest one"),
       not_priced("deepspeed", kNamesADeepSpeedConfig),
       not_priced("fsdp", kFsdpByFlags)},
      [](const FlatConfig& c, ImportedConfig& out) {
        // An axolotl config is run by axolotl: its profile (docs/frameworks.md, axolotl: the HF
        // Trainer with the YAML's options), as a torchtune recipe is torchtune's.
        out.patch.insert(out.patch.begin(),
                         {"framework", "axolotl", out.file + ": (an axolotl config)", true});
        finish_evaluation(c, out);
        finish_targets(c, out);
        finish_precision(c, out);
        // schemas/config.py sequence_len: default=512.
        if (rules::has(c, "sequence_len")) return;
        out.patch.push_back({"seq", "512", out.file + ": (sequence_len absent)", true});
        out.used.push_back("sequence_len absent -> seq 512 (axolotl's default)");
      },
      // schemas/validation.py check_qlora: "Can't load qlora in 8bit", "Require
      // cfg.load_in_4bit to be True for qlora".
      [](const FlatConfig& c, const std::string& file) -> std::optional<Error> {
        auto on = [&](const char* k) { return rules::has(c, k) && is_true(c.at(k)); };
        if (!rules::has(c, "adapter") || c.at("adapter") != "qlora") return std::nullopt;
        if (on("load_in_8bit")) {
          return bad_input(file, "load_in_8bit",
                           "adapter qlora loads the base in 4-bit; axolotl refuses load_in_8bit "
                           "with it (\"Can't load qlora in 8bit\")");
        }
        if (on("load_in_4bit")) return std::nullopt;
        return bad_input(file, "adapter",
                         "qlora needs load_in_4bit: true (axolotl refuses it without: "
                         "\"Require cfg.load_in_4bit to be True for qlora\")");
      }};
  return f;
}

}  // namespace trainmem::io

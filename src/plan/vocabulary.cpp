// The vocabulary tables: one per plan setting, canonical name first, then the ecosystem's
// spellings of the same thing. Sources of the aliases:
//   optimizer: transformers/training_args.py OptimizerNames (the HF Trainer's `optim` strings);
//   attention: transformers modeling_utils `attn_implementation` values;
//   precision: Lightning's `precision=` strings (bf16-mixed, bf16-true, 16-mixed, 32-true);
//   LoRA targets: PEFT target_modules as written for Llama/Qwen/Mistral (q_proj ... down_proj).
#include "plan/vocabulary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "trainmem/plan.h"
#include "util/edit_distance.h"

namespace trainmem {
namespace {

std::string normalise(std::string_view s) {
  std::string out;
  for (char c : s) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += lower == '_' ? '-' : lower;
  }
  return out;
}

}  // namespace

const Term* find_term(const Vocabulary& v, std::string_view text) {
  const std::string key = normalise(text);
  for (const Term& t : v.terms) {
    if (normalise(t.name) == key) return &t;
    for (const std::string& a : t.aliases) {
      if (normalise(a) == key) return &t;
    }
  }
  return nullptr;
}

Result<const Term*> resolve_term(const Vocabulary& v, std::string_view text) {
  if (const Term* t = find_term(v, text)) return t;
  for (const RefusedName& r : v.refused) {
    if (normalise(r.name) == normalise(text)) {
      return Error{ErrorCode::usage, "", v.flag,
                   fmt::format("'{}' is not priced by trainmem: {}", text, r.reason)};
    }
  }
  // Nearest spellings, canonical or alias, within a third of the length (at least 2 edits).
  const std::string key = normalise(text);
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const Term& t : v.terms) {
    std::vector<std::string> spellings = t.aliases;
    spellings.insert(spellings.begin(), t.name);
    for (const std::string& s : spellings) {
      const std::size_t d = edit_distance(key, normalise(s));
      if (d <= std::max<std::size_t>(2, key.size() / 3)) near.emplace_back(d, s);
    }
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string hint;
  for (std::size_t i = 0; i < near.size() && i < 3; ++i) {
    hint += (i == 0 ? "" : ", ") + near[i].second;
  }
  return Error{ErrorCode::usage, "", v.flag,
               fmt::format("'{}' is not one of: {}{}", text, canonical_names(v),
                           hint.empty() ? "" : fmt::format(" (did you mean {}?)", hint))};
}

std::string canonical_names(const Vocabulary& v) {
  std::string out;
  for (const Term& t : v.terms) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

std::string help_names(const Vocabulary& v) {
  std::string names, aliases;
  for (const Term& t : v.terms) {
    names += (names.empty() ? "" : " | ") + t.name;
    for (const std::string& a : t.aliases) aliases += (aliases.empty() ? "" : ", ") + a;
  }
  return aliases.empty() ? names : names + " (also: " + aliases + ")";
}

const Vocabulary& method_vocabulary() {
  static const Vocabulary v{
      "--method",
      {{"full", {"full-finetune", "fft"}, "every parameter trains"},
       {"lora", {}, "base frozen, low-rank adapters train (PEFT LoraConfig)"},
       {"qlora", {}, "lora on a block-quantised base (bitsandbytes load_in_4bit)"},
       {"freeze", {}, "only chosen modules or layers train"}}};
  return v;
}

const Vocabulary& precision_vocabulary() {
  static const Vocabulary v{
      "--precision",
      {{
           "bf16-mixed",
           {"autocast-bf16", "amp-bf16"},
           "fp32 weights, grads and states; bf16 compute under torch.autocast (HF Trainer "
           "bf16=True, "
           "Lightning bf16-mixed)",
       },
       {
           "bf16",
           {"bf16-true", "pure-bf16"},
           "weights, grads and states in bf16, no master copy (model loaded in bf16; Lightning "
           "bf16-true)",
       },
       {
           "bf16-fp32-master",
           {"bf16-master"},
           "bf16 weights and grads, fp32 master copy and states (DeepSpeed bf16, Megatron)",
       },
       {
           "fp16-mixed",
           {"autocast-fp16", "amp-fp16", "16-mixed"},
           "fp32 weights, fp16 compute under autocast with a GradScaler (HF Trainer fp16=True; "
           "T4/V100)",
       },
       {
           "fp16-fp32-master",
           {"fp16-master"},
           "fp16 weights and grads, fp32 master copy and states (DeepSpeed fp16, Apex O2)",
       },
       {"fp32", {"32-true", "float32", "no-amp"}, "everything fp32"}}};
  return v;
}

const Vocabulary& optimizer_vocabulary() {
  static const Vocabulary v{
      "--optimizer",
      {{
           "adamw",
           {"adam", "adamw_torch", "adamw_torch_fused", "adamw_apex_fused", "adamw_hf"},
           "torch.optim.AdamW (adamw_torch: foreach; adamw_torch_fused: fused)",
       },
       // adamw_torch_8bit: torchao's AdamW8bit, block-quantised 8-bit states as bitsandbytes'.
       {"adamw-8bit",
        {"adamw_8bit", "adamw_bnb_8bit", "bnb_8bit", "adamw_torch_8bit"},
        "bitsandbytes AdamW8bit (torchao's for adamw_torch_8bit)"},
       {"paged-adamw",
        {"paged_adamw", "paged_adamw_32bit"},
        "bitsandbytes PagedAdamW (fp32 states)"},
       {"paged-adamw-8bit", {"paged_adamw_8bit"}, "bitsandbytes PagedAdamW8bit"},
       {"adafactor", {}, "transformers Adafactor (no first moment)"},
       {"sgd", {}, "torch SGD without momentum"},
       {"sgd-momentum", {"sgd_momentum"}, "torch SGD with momentum"},
       {"lion", {"lion_pytorch"}, "Lion of lion-pytorch (one state like the parameter)"},
       // transformers/trainer.py get_optimizer_cls_and_kwargs: every `lion*` optim is
       // bitsandbytes' Lion with optim_bits 32 or 8 and is_paged.
       {"lion-32bit", {"lion_32bit"}, "bitsandbytes Lion (one fp32 state)"},
       {"lion-8bit", {"lion_8bit"}, "bitsandbytes Lion8bit"},
       {"paged-lion", {"paged_lion_32bit", "paged_lion"}, "bitsandbytes PagedLion (fp32 state)"},
       {"paged-lion-8bit", {"paged_lion_8bit"}, "bitsandbytes PagedLion8bit"},
       {"adamw-32bit", {}, "bitsandbytes AdamW / AdamW32bit (fp32 states)"},
       {"rmsprop-32bit",
        {"rmsprop_bnb", "rmsprop_bnb_32bit"},
        "bitsandbytes RMSprop (one fp32 state)"},
       {"rmsprop-8bit", {"rmsprop_bnb_8bit"}, "bitsandbytes RMSprop8bit"},
       {"ademamix", {}, "bitsandbytes AdEMAMix (three fp32 states)"},
       {"ademamix-8bit", {"ademamix_8bit"}, "bitsandbytes AdEMAMix8bit"},
       {"paged-ademamix",
        {"paged_ademamix_32bit", "paged_ademamix"},
        "bitsandbytes PagedAdEMAMix (fp32 states)"},
       {"paged-ademamix-8bit", {"paged_ademamix_8bit"}, "bitsandbytes PagedAdEMAMix8bit"},
       {"adam-mini", {"adam_mini"}, "Adam-mini"},
       {"muon", {}, "Muon (AdamW for non-matrix parameters)"}},
      // transformers/training_args.py OptimizerNames (v5.24) that no row above prices.
      {{"adamw_torch_xla", "it runs on TPUs (torch_xla), which trainmem does not model"},
       {"adamw_torch_npu_fused", "it runs on Ascend NPUs, which trainmem does not model"},
       {"adamw_torch_4bit", "torchao's 4-bit states are not modelled"},
       {"adamw_anyprecision", "torchdistx's AnyPrecisionAdamW states are not modelled"},
       {"adagrad", "torch Adagrad (its state is made at construction) is not modelled"},
       {"rmsprop", "torch RMSprop is not modelled (rmsprop_bnb, bitsandbytes', is)"},
       {"galore_adamw", "GaLore's low-rank projected states are not modelled"},
       {"galore_adamw_8bit", "GaLore's low-rank projected states are not modelled"},
       {"galore_adafactor", "GaLore's low-rank projected states are not modelled"},
       {"galore_adamw_layerwise", "GaLore's low-rank projected states are not modelled"},
       {"galore_adamw_8bit_layerwise", "GaLore's low-rank projected states are not modelled"},
       {"galore_adafactor_layerwise", "GaLore's low-rank projected states are not modelled"},
       {"apollo_adamw", "APOLLO's low-rank projected states are not modelled"},
       {"apollo_adamw_layerwise", "APOLLO's low-rank projected states are not modelled"},
       {"lomo", "LOMO updates in backward without gradients; not modelled"},
       {"adalomo", "AdaLomo updates in backward without gradients; not modelled"},
       {"grokadamw", "GrokAdamW's states are not modelled"},
       {"schedule_free_adamw", "schedule-free optimizers are not modelled"},
       {"schedule_free_radam", "schedule-free optimizers are not modelled"},
       {"schedule_free_sgd", "schedule-free optimizers are not modelled"},
       {"stable_adamw", "torch-optimi's StableAdamW is not modelled"}}};
  return v;
}

std::optional<std::string_view> implied_optimizer_impl(std::string_view text) {
  // transformers/trainer.py get_optimizer_cls_and_kwargs: adamw_torch passes no fused/foreach
  // (torch then picks foreach on CUDA); adamw_torch_fused passes fused=True; apex's FusedAdam is a
  // fused kernel; adamw_hf was transformers' own per-parameter loop.
  const std::string key = normalise(text);
  if (key == "adamw-torch") return "foreach";
  if (key == "adamw-torch-fused" || key == "adamw-apex-fused") return "fused";
  if (key == "adamw-hf") return "for-loop";
  return std::nullopt;
}

const Vocabulary& optimizer_impl_vocabulary() {
  static const Vocabulary v{
      "--optimizer-impl",
      {{"fused", {}, "one fused kernel per step (torch fused=True)"},
       {"foreach", {}, "multi-tensor kernels over parameter lists (torch foreach=True)"},
       {"for-loop", {"for_loop", "single_tensor"}, "one parameter at a time (foreach=False)"}}};
  return v;
}

const Vocabulary& checkpointing_vocabulary() {
  static const Vocabulary v{
      "--checkpointing",
      {{"none", {"false", "off", "no"}, "every layer keeps its activations"},
       {"full", {"true", "on", "yes"}, "gradient_checkpointing=True: one input per layer kept"},
       {"selective", {}, "recompute attention only (Megatron selective)"}}};
  return v;
}

const Vocabulary& attention_vocabulary() {
  static const Vocabulary v{"--attention",
                            {{"eager", {}, "attention matrix materialised"},
                             {"sdpa", {}, "torch scaled_dot_product_attention"},
                             {"flash",
                              {"flash_attention_2", "flash_attention_3", "fa2", "flash_attn"},
                              "FlashAttention (attn_implementation=flash_attention_2)"}}};
  return v;
}

const Vocabulary& loss_vocabulary() {
  static const Vocabulary v{
      "--loss",
      {{"full", {}, "full logits and their fp32 upcast (transformers ForCausalLMLoss)"},
       {"chunked",
        {"chunked_nll"},
        "TRL's chunked_nll: lm_head and cross-entropy on chunks of 256 tokens in fp32 "
        "(loss_type=\"chunked_nll\", TRL's default since 1.7)"},
       {"fused",
        {"liger", "liger-kernel"},
        "Liger fused linear cross-entropy "
        "(use_liger_kernel=True)"}}};
  return v;
}

const Vocabulary& eval_strategy_vocabulary() {
  // transformers training_args.py eval_strategy (IntervalStrategy): "no", "steps", "epoch".
  static const Vocabulary v{
      "--eval-strategy",
      {{"no", {"none", "false", "off"}, "no evaluation during training (the Trainer's default)"},
       {"steps", {}, "Trainer.evaluate() every eval_steps optimizer steps"},
       {"epoch", {}, "Trainer.evaluate() at the end of each epoch"}}};
  return v;
}

const Vocabulary& convention_vocabulary() {
  static const Vocabulary v{"--convention",
                            {{"exact", {}, "the exact inventory and the framework's allocations"},
                             {"textbook", {}, "the seeds' uniform bytes per parameter"}}};
  return v;
}

const Vocabulary& quant_vocabulary() {
  static const Vocabulary v{"--quant",
                            {{"nf4", {}, "bnb_4bit_quant_type=nf4"},
                             {"fp4", {}, "bnb_4bit_quant_type=fp4"},
                             {"int8", {"8bit", "load_in_8bit"}, "load_in_8bit=True"}}};
  return v;
}

const Vocabulary& framework_vocabulary() {
  static const Vocabulary v{
      "--framework",
      {{"hf",
        {"transformers", "trainer", "peft", "llama-factory"},
        "Hugging Face transformers' Trainer (LLaMA-Factory trains through it)"},
       {"trl", {}, "TRL SFTTrainer: the HF Trainer plus its token-accuracy metrics"},
       {"litgpt", {}, "Lightning-AI litgpt finetune scripts (bf16-true, chunked loss)"},
       {"torchtune", {}, "PyTorch torchtune single-device recipes"},
       {"unsloth", {}, "Unsloth: HF with offloaded checkpointing and a fused loss"},
       {"axolotl", {}, "axolotl: the HF Trainer driven by a YAML config"},
       {"mlx", {"mlx-lm"}, "mlx-lm LoRA on Apple silicon (unified memory)"}}};
  return v;
}

const Vocabulary& lora_target_vocabulary() {
  static const Vocabulary v{
      "--lora-targets",
      {{"q", {"q_proj", "query"}, "attention query projection"},
       {"k", {"k_proj", "key"}, "attention key projection"},
       {"v", {"v_proj", "value"}, "attention value projection"},
       {"o", {"o_proj", "out_proj", "output_proj", "dense"}, "attention output projection"},
       {"qkv", {"qkv_proj", "c_attn", "query_key_value"}, "fused q/k/v projection (Phi-3)"},
       {"gate", {"gate_proj", "w1"}, "MLP gate projection"},
       {"up", {"up_proj", "w3"}, "MLP up projection"},
       {"down", {"down_proj", "w2"}, "MLP down projection"},
       {"gate_up", {"gate_up_proj"}, "fused gate/up projection (Phi-3)"},
       {"lm_head", {}, "output head"},
       {"embed", {"embed_tokens", "wte"}, "token embedding"},
       {"router", {"mlp.gate"}, "MoE router"},
       {"experts", {}, "every routed expert's gate/up/down"},
       {"shared_experts", {"shared_expert"}, "MoE shared experts"},
       {"q_a", {"q_a_proj"}, "MLA query down-projection"},
       {"q_b", {"q_b_proj"}, "MLA query up-projection"},
       {"kv_a", {"kv_a_proj_with_mqa"}, "MLA key/value down-projection"},
       {"kv_b", {"kv_b_proj"}, "MLA key/value up-projection"},
       {"all-linear", {}, "every linear but the head (PEFT target_modules='all-linear')"},
       {"attention", {}, "every attention projection"},
       {"mlp", {}, "every MLP projection"}}};
  return v;
}

std::vector<const Vocabulary*> all_vocabularies() {
  return {&method_vocabulary(),         &precision_vocabulary(),     &optimizer_vocabulary(),
          &optimizer_impl_vocabulary(), &checkpointing_vocabulary(), &attention_vocabulary(),
          &loss_vocabulary(),           &quant_vocabulary(),         &convention_vocabulary(),
          &framework_vocabulary(),      &lora_target_vocabulary(),   &eval_strategy_vocabulary()};
}

Result<std::int64_t> parse_tokens(std::string_view text, const std::string& field) {
  std::string s;
  for (char c : text) {
    if (c != ',' && c != '_' && c != ' ') s += c;
  }
  std::int64_t scale = 1;
  if (!s.empty()) {
    const char last = static_cast<char>(std::tolower(static_cast<unsigned char>(s.back())));
    if (last == 'k') scale = 1024;
    if (last == 'm') scale = 1024 * 1024;
    if (scale != 1) s.pop_back();
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || !std::isfinite(value) || value < 0) {
    return Error{ErrorCode::bad_input, "", field,
                 fmt::format("'{}' is not a token count such as 2048, 4k or 32k", text)};
  }
  const double tokens = value * static_cast<double>(scale);
  if (tokens != std::floor(tokens) || tokens > 9.0e15) {
    return Error{ErrorCode::bad_input, "", field,
                 fmt::format("'{}' is not a whole number of tokens", text)};
  }
  return static_cast<std::int64_t>(tokens);
}

}  // namespace trainmem

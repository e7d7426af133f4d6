// The framework profile table: every difference from the Hugging Face behaviour, with its source.
// docs/frameworks.md explains each row; tests/unit/framework_test.cpp checks each one's effect.
#include "plan/framework.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "gpu/cuda_context.h"
#include "trainmem/plan.h"
#include "util/edit_distance.h"

namespace trainmem {
namespace {

constexpr std::array<FrameworkProfile, 7> kProfiles{{
    {"hf", "transformers", "",
     "Hugging Face transformers Trainer with PEFT and bitsandbytes (the default)"},
    {"trl", "trl", "hf", "TRL SFTTrainer: the HF Trainer plus its token-accuracy metrics"},
    {"litgpt", "litgpt", "", "Lightning-AI litgpt finetune scripts (bf16-true, chunked loss)"},
    {"torchtune", "torchtune", "", "PyTorch torchtune single-device recipes"},
    {"unsloth", "unsloth", "hf", "Unsloth: HF with offloaded checkpointing and a fused loss"},
    {"axolotl", "axolotl", "hf", "axolotl: the HF Trainer driven by a YAML config"},
    {"mlx", "mlx-lm", "", "mlx-lm LoRA on Apple silicon (unified memory)"},
}};

// "cuda" is the CUDA runtime of the torch build (torch.version.cuda): the context's size depends
// on it (src/gpu/cuda_context.cpp).
constexpr std::array<std::string_view, 10> kLibraries{
    "transformers", "trl",     "peft",    "bitsandbytes", "litgpt",
    "torchtune",    "unsloth", "axolotl", "mlx-lm",       "cuda"};

// framework, method, library, from, below, knob, value, what, source
constexpr std::array<Difference, 50> kDifferences{{
    // transformers versions (every HF-based profile).
    {"hf", "", "transformers", "", "4.46", Knob::fp32_logits_in_model, 1,
     "the model output holds fp32 logits (`logits = logits.float()` in the forward)",
     "transformers v4.45.2 models/llama/modeling_llama.py LlamaForCausalLM.forward"},
    {"hf", "", "transformers", "", "4.49", Knob::loss_shift_copy, 1,
     "the loss makes a contiguous shifted fp32 copy of the logits",
     "transformers v4.48 loss/loss_utils.py ForCausalLMLoss (removed by PR #35646)"},
    {"hf", "", "transformers", "", "5.0", Knob::kv_cache_in_output, 1,
     "the Trainer leaves the config's use_cache (True in most configs), so the forward builds a "
     "DynamicCache that the model output carries (in training unless gradient checkpointing "
     "turns it off; always in evaluation)",
     "transformers v4.57 trainer.py (no use_cache override); v5 sets model.config.use_cache from "
     "TrainingArguments.use_cache, default False (PR #41585)"},
    {"hf", "", "transformers", "", "5.0", Knob::experts_as_linears, 1,
     "MoE routed experts are nn.Linear modules: QLoRA quantises them and LoRA target_modules "
     "names (gate_proj, up_proj, down_proj, all-linear) adapt them",
     "transformers v4.57 models/qwen3_moe/modeling_qwen3_moe.py Qwen3MoeSparseMoeBlock "
     "(nn.ModuleList of Qwen3MoeMLP); v5 fuses them into Qwen3MoeExperts 3-D parameters, which "
     "bitsandbytes' Linear4bit conversion skips (bitsandbytes issue #1849)"},
    {"hf", "", "transformers", "", "5.0", Knob::checkpointing_input_grads, 0,
     "gradient checkpointing makes the embedding output require grad only under PEFT: a frozen "
     "prefix of layers keeps nothing (transformers 5 does it for every decoder model)",
     "transformers v4.57.1 modeling_utils.py gradient_checkpointing_enable (only if "
     "_hf_peft_config_loaded); v5.0.0 enable_input_grads = main_input_name == \"input_ids\" or "
     "_hf_peft_config_loaded"},
    {"hf", "", "transformers", "", "4.52", Knob::bnb_embeddings_32bit, 0,
     "a bitsandbytes 8-bit optimizer keeps 8-bit states for the embeddings too",
     "transformers v4.51.3 trainer.py create_optimizer: the 32-bit override for nn.Embedding runs "
     "only if optimizer_cls.__name__ == \"Adam8bit\", and get_optimizer_cls_and_kwargs returns "
     "bitsandbytes' AdamW / Lion; v4.52.4 tests \"bitsandbytes\" in str(optimizer_cls) and "
     "optim_bits == 8"},
    {"hf", "", "transformers", "", "5.0", Knob::cache_copies_states, 0,
     "the KV cache stores the first key/value states as they are (a view keeps its base)",
     "transformers v4.46.3 cache_utils.py DynamicCache.update (key_cache.append(key_states))"},
    // TRL.
    {"trl", "", "trl", "0.15", "", Knob::metrics_logits_copy, 1,
     "compute_loss copies the shifted logits to log mean_token_accuracy",
     "trl trainer/sft_trainer.py SFTTrainer.compute_loss"},
    {"trl", "", "trl", "0.22", "", Knob::kv_cache_in_output, 0,
     "compute_loss calls the model with use_cache=False",
     "trl v0.22.0 trainer/sft_trainer.py SFTTrainer.compute_loss inputs[\"use_cache\"] = False "
     "(PR #3891)"},
    // litgpt.
    {"litgpt", "", "", "", "", Knob::outputs_kept, 1,
     "`logits = model(...)` stays referenced through backward",
     "litgpt finetune/lora.py fit(): logits, loss, fabric.backward(loss)"},
    {"litgpt", "", "", "", "", Knob::loss_upcast, 0,
     "cross_entropy runs on the logits as the model returns them, with no fp32 copy of its own "
     "(they are fp32 under bf16-true, below, so log_softmax saves fp32)",
     "litgpt utils.py chunked_cross_entropy"},
    {"litgpt", "", "", "", "", Knob::loss_chunk_positions, 128,
     "lm_head and the loss run per chunk of 128 positions",
     "litgpt finetune/lora.py model(input_ids, lm_head_chunk_size=128); utils.py "
     "chunked_cross_entropy(chunk_size=128)"},
    {"litgpt", "", "", "", "", Knob::fused_qkv_attention, 1,
     "one fused qkv projection: SDPA's v view keeps all of it (MHA, and multi-query, where the "
     "expand stays a view), or k and v are expanded to every head (GQA); LoRA on q/k/v shares "
     "one dropout",
     "litgpt model.py CausalSelfAttention.forward; lora.py LoRAQKVLinear"},
    {"litgpt", "", "", "", "", Knob::fp32_logits_in_model, 1,
     "Fabric's bf16-true precision casts the model output to the default dtype (fp32): the kept "
     "logits and log_softmax's saved output are fp32",
     "lightning@2.4.0.dev20240728 fabric/wrappers.py:143 _FabricModule.forward "
     "precision.convert_output(output); fabric/plugins/precision/half.py:61-62 "
     "HalfPrecision.convert_output (dst_type=torch.get_default_dtype())"},
    {"litgpt", "", "", "", "", Knob::unties_embeddings, 1,
     "litgpt's GPT has its own lm_head beside the embedding; the HF converter copies a tied "
     "embedding into it, and the finetune scripts reject tie_embeddings",
     "litgpt@00af8b0d model.py:25-28 GPT.__init__ (lm_head, wte); "
     "scripts/convert_hf_checkpoint.py:206-207; finetune/lora.py:451, full.py:396"},
    {"litgpt", "", "", "", "", Knob::bnb_embeddings_32bit, 0,
     "a bitsandbytes 8-bit optimizer keeps 8-bit states for every tensor it steps",
     "litgpt utils.py instantiate_bnb_optimizer (no GlobalOptimManager override)"},
    {"litgpt", "", "", "", "", Knob::checkpointing_input_grads, 0,
     "its own checkpointing leaves the embedding output as it is: a frozen prefix of layers "
     "keeps nothing",
     "litgpt runs its own GPT, not transformers' gradient_checkpointing_enable"},
    {"litgpt", "", "", "", "", Knob::model_dropout, 0,
     "litgpt's GPT has no dropout modules (SDPA with dropout_p=0.0): the config's attention, "
     "residual and embedding dropout do not run",
     "litgpt@00af8b0d model.py:319 CausalSelfAttention.scaled_dot_product_attention "
     "(dropout_p=0.0); GPT, Block, CausalSelfAttention and the MLP classes build no nn.Dropout"},
    {"litgpt", "", "", "", "", Knob::fused_gelu, 1,
     "the MLP's GELU is torch.nn.functional.gelu(approximate=config.gelu_approximate), one op "
     "that saves its input (Phi's gelu_new runs as gelu with approximate='tanh')",
     "litgpt@00af8b0d model.py:347-357 GptNeoxMLP, :377-381 GemmaMLP; config.py phi-1_5/phi-2 "
     "gelu_approximate=\"tanh\""},
    {"litgpt", "", "", "", "", Knob::rms_norm_fp32_weight, 1,
     "RMSNorm multiplies the weight into the fp32 normalised tensor, then casts back",
     "litgpt@00af8b0d model.py:550-571 RMSNorm.forward `(x_normed * weight.float()).to(dtype)` "
     "(lit-gpt #606, 6178c7cc, 2023-10-24)"},
    {"litgpt", "", "", "", "", Knob::loss_in_model, 0,
     "the loop computes the loss from the returned logits, after `logits = model(...)` has "
     "released the previous step's",
     "litgpt@00af8b0d finetune/lora.py:304-308 fit() (logits = model(...); loss = "
     "chunked_cross_entropy(logits, targets[..., 1:])), full.py:255-258"},
    {"litgpt", "", "", "", "", Knob::adapters_fp32, 0,
     "LoRA weights are created in the model dtype (bf16-true)",
     "litgpt lora.py LoRALinear (nn.Parameter under fabric.init_module)"},
    {"litgpt", "", "", "", "", Knob::eval_between_steps, 1,
     "validate() runs between optimizer steps (a 2-batch sanity check before training, then every "
     "eval.interval steps) under no_grad with full, unchunked logits and a bf16 cross_entropy",
     "litgpt@00af8b0d finetune/lora.py:282,347-349 fit(), :369-384 validate() "
     "(model(input_ids), chunked_cross_entropy(logits[..., :-1, :], ..., chunk_size=0))"},
    {"litgpt", "", "", "", "", Knob::generates_sample, 1,
     "generate_example() samples with a KV cache of batch 1 after each validation",
     "litgpt@00af8b0d finetune/lora.py:350,388-407 generate_example(): "
     "model.set_kv_cache(batch_size=1); model.py:323-344 build_kv_cache, :545 build_mask_cache"},
    {"litgpt", "qlora", "", "", "", Knob::load_quantiser,
     static_cast<std::int64_t>(LoadQuantiser::lightning_bnb),
     "each 4-bit layer is built in bf16 on the GPU and quantised through an fp16 copy",
     "lightning@2.4.0.dev20240728 fabric/plugins/precision/bitsandbytes.py:305-340 "
     "_Linear4bit.__init__/quantize (weight.to(device, torch.half), quantize_4bit)"},
    {"litgpt", "qlora", "", "", "", Knob::quantises_lm_head, 1,
     "the lm_head is a 4-bit layer too: BitsandbytesPrecision replaces every nn.Linear, and "
     "litgpt names no ignore_modules",
     "litgpt@00af8b0d finetune/lora.py:138 BitsandbytesPrecision(quantize[4:], dtype); "
     "lightning fabric/plugins/precision/bitsandbytes.py convert_module, module_init_context "
     "(_ClassReplacementContextManager torch.nn.Linear), _convert_layers(ignore_modules)"},
    // torchtune.
    {"torchtune", "", "", "", "", Knob::bnb_embeddings_32bit, 0,
     "a bitsandbytes 8-bit optimizer keeps 8-bit states for every tensor it steps",
     "torchtune recipes build the optimizer with config.instantiate (no GlobalOptimManager "
     "override)"},
    {"torchtune", "", "", "", "", Knob::checkpointing_input_grads, 0,
     "its own checkpointing leaves the embedding output as it is: a frozen prefix of layers "
     "keeps nothing",
     "torchtune training/_activation_checkpointing.py set_activation_checkpointing (torch "
     "apply_activation_checkpointing)"},
    {"torchtune", "", "", "", "", Knob::loss_in_model, 0,
     "the recipe computes the loss from the returned logits",
     "torchtune v0.1.1 recipes/lora_finetune_single_device.py:447-453, v0.3.0 :579-592 "
     "(logits = self._model(...); loss = self._loss_fn(logits, labels))"},
    {"torchtune", "", "", "", "", Knob::adapters_fp32, 0,
     "LoRA weights are built in the model dtype",
     "torchtune modules/peft/lora.py LoRALinear; recipes set_default_dtype(bf16)"},
    {"torchtune", "", "", "", "", Knob::skips_grad_sync_while_accumulating, 0,
     "the distributed recipes reduce the gradients after every micro-batch (no no_sync): FSDP "
     "keeps only its sharded gradients while accumulating",
     "torchtune@bd2a0fc7 recipes/*_distributed.py (no no_sync or set_requires_gradient_sync "
     "anywhere in recipes/ or torchtune/)"},
    {"torchtune", "", "torchtune", "0.3", "", Knob::loss_chunks, 8,
     "CEWithChunkedOutputLoss: the output projection and the fp32 upcast run in 8 chunks",
     "torchtune modules/loss/ce_chunked_output_loss.py (PR #1390)"},
    {"torchtune", "", "torchtune", "0.3", "", Knob::logits_freed_after_loss, 1,
     "the recipe deletes the logits right after the loss",
     "torchtune recipes/lora_finetune_single_device.py `del logits`"},
    {"torchtune", "", "torchtune", "", "0.3", Knob::outputs_kept, 1,
     "the shifted logits stay referenced through backward",
     "torchtune v0.1 recipes/lora_finetune_single_device.py train()"},
    {"torchtune", "", "torchtune", "", "0.3", Knob::loss_upcast, 0,
     "nn.CrossEntropyLoss runs on the model's fp32 logits as they are: no upcast of its own",
     "torchtune v0.1 recipes/configs/llama2/7B_lora_single_device.yaml loss: "
     "torch.nn.CrossEntropyLoss"},
    {"torchtune", "", "torchtune", "", "0.3", Knob::fp32_logits_in_model, 1,
     "TransformerDecoder.forward returns `self.output(h).float()`: the logits are fp32, and the "
     "bf16 lm_head output lives until the cast",
     "torchtune@ff594c23 torchtune/modules/transformer.py:210 (v0.2.1 :250); measured on CPU: "
     "validation/data/torchtune-loss-probe.json"},
    {"torchtune", "", "torchtune", "", "0.3", Knob::loss_shift_copy, 1,
     "the recipe shifts with `logits[..., :-1, :].contiguous()` (an fp32 copy while the model's "
     "output is still referenced), then runs CrossEntropyLoss on `logits.transpose(1, 2)`, whose "
     "log_softmax over dim 1 first makes the transposed copy contiguous: one more fp32 copy of "
     "the logits at a time",
     "torchtune@ff594c23 recipes/lora_finetune_single_device.py:447-453, "
     "full_finetune_single_device.py:403-409; aten/src/ATen/native/cuda/SoftMax.cu host_softmax "
     "`input_.contiguous()` (CPU the same: validation/data/torchtune-loss-probe.json)"},
    {"torchtune", "qlora", "torchtune", "", "0.2", Knob::load_quantiser,
     static_cast<std::int64_t>(LoadQuantiser::torchao_unchunked),
     "torchao 0.1 to_nf4 compares every element with the 16 NF4 values at once",
     "torchtune@ff594c23 recipes/lora_finetune_single_device.py:254-269 (build on the device, "
     "then load_state_dict), utils/_register_nf4_dispatch_ops.py:22-35 (copy_: to_nf4 of the "
     "incoming weight on the GPU), pyproject.toml:24 torchao==0.1; torchao v0.1 "
     "dtypes/nf4tensor.py:438-446 quantize_tensor_nearest"},
    {"torchtune", "qlora", "torchtune", "0.2", "", Knob::load_quantiser,
     static_cast<std::int64_t>(LoadQuantiser::torchao_chunked),
     "torchao >= 0.2 to_nf4 quantises in chunks of 1,048,576 elements",
     "torchao v0.2.0 dtypes/nf4tensor.py CHUNK_SIZE = 1024**2 (Note: Quantize in Chunks)"},
    // unsloth.
    {"unsloth", "", "", "", "", Knob::offload_checkpoints, 1,
     "use_gradient_checkpointing=\"unsloth\" copies each layer's input to host memory",
     "unsloth models/_utils.py Unsloth_Offloaded_Gradient_Checkpointer"},
    {"unsloth", "qlora", "", "", "", Knob::quantises_fused_experts, 1,
     "its MoE patch quantises the fused 3-D expert parameters to 4-bit, which bitsandbytes' own "
     "conversion skips on transformers 5",
     "unsloth-zoo PR #527 (merged 2026-03) temporary_patches/moe_utils.py: expert nn.Parameters "
     "become Params4bit"},
    {"unsloth", "", "", "", "", Knob::kv_cache_in_output, 0,
     "its patched model forward builds no KV cache in training (use_cache = False when training "
     "without a cache passed in)",
     "unsloth models/llama.py LlamaModel_fast_forward (since Feb 2024, #173)"},
    // mlx-lm.
    {"mlx", "", "", "", "", Knob::bnb_embeddings_32bit, 0,
     "no bitsandbytes: mlx-lm steps MLX optimizers", "mlx-lm tuner/trainer.py (mlx.optimizers)"},
    {"mlx", "", "", "", "", Knob::checkpointing_input_grads, 0,
     "its own checkpointing leaves the embedding output as it is: a frozen prefix of layers "
     "keeps nothing",
     "mlx-lm tuner/trainer.py grad_checkpoint (gradients of the trainable parameters only)"},
    {"mlx", "", "", "", "", Knob::unified_memory, 1,
     "Apple unified memory: no CUDA context and no caching allocator",
     "mlx-lm README (Apple silicon); MLX unified memory model"},
    {"mlx", "", "", "", "", Knob::cublas_workspaces, 0, "no cuBLAS workspaces",
     "MLX Metal backend"},
    {"mlx", "", "", "", "", Knob::adapters_fp32, 0, "LoRA weights in the model dtype",
     "mlx-lm tuner/lora.py LoRALinear"},
    {"mlx", "", "", "", "", Knob::lora_last_layers, 16,
     "LoRA is applied to the last 16 layers (num_layers)",
     "mlx-lm lora.py CONFIG_DEFAULTS num_layers=16"},
    // Library behaviour, every profile.
    {"*", "", "bitsandbytes", "", "0.43.2", Knob::bnb_saves_4bit_input, 1,
     "MatMul4Bit keeps each 4-bit layer's input in its ctx until the autograd graph is freed",
     kBnbKeepsInputSource},
    // torchtune defaults for a full fine-tune on one device.
    {"torchtune", "full", "", "", "", Knob::optimizer_in_backward, 1,
     "the optimizer steps each parameter in backward and frees its gradient",
     "torchtune recipes/configs/llama3_1/8B_full_single_device.yaml optimizer_in_bwd: True"},
}};

// framework, method, flag, value, source[, from: the first release of the profile's library]
constexpr std::array<ProfileDefault, 19> kDefaults{{
    {"litgpt", "", "precision", "bf16",
     "litgpt finetune/lora.py: precision defaults to bf16-true where supported"},
    {"litgpt", "", "lora_dropout", "0.05", "litgpt finetune/lora.py setup(lora_dropout=0.05)"},
    {"litgpt", "qlora", "optimizer", "paged-adamw",
     "litgpt finetune/lora.py: AdamW becomes bnb PagedAdamW when quantizing"},
    {"litgpt", "qlora", "prepare_kbit", "false",
     "litgpt finetune/lora.py: no PEFT prepare_model_for_kbit_training; norms and embeddings stay "
     "in the bf16-true dtype"},
    {"trl", "", "checkpointing", "full",
     "trl v0.22.0 trainer/sft_config.py SFTConfig.gradient_checkpointing default True (PR #3510; "
     "TrainingArguments' is False)",
     "0.22"},
    {"trl", "", "loss", "chunked",
     "trl v1.7.0 trainer/sft_config.py SFTConfig.__post_init__: loss_type = \"chunked_nll\" "
     "unless use_liger_kernel (PR #5846)",
     "1.7"},
    {"torchtune", "", "precision", "bf16", "torchtune recipe configs: dtype: bf16"},
    {"torchtune", "", "checkpointing", "full",
     "torchtune recipe configs: enable_activation_checkpointing: True"},
    {"torchtune", "lora", "optimizer_impl", "fused",
     "torchtune recipes/configs/llama3_1/8B_lora_single_device.yaml optimizer.fused: True"},
    {"torchtune", "qlora", "optimizer_impl", "fused",
     "torchtune recipes/configs/llama3_1/8B_qlora_single_device.yaml optimizer.fused: True"},
    {"torchtune", "qlora", "prepare_kbit", "false",
     "torchtune recipes/lora_finetune_single_device.py: torchao NF4 base weights, no PEFT "
     "prepare_model_for_kbit_training; the rest stays in dtype bf16"},
    {"torchtune", "full", "optimizer", "paged-adamw-8bit",
     "torchtune recipes/configs/llama3_1/8B_full_single_device.yaml bitsandbytes PagedAdamW8bit"},
    {"unsloth", "", "checkpointing", "full",
     "unsloth get_peft_model(use_gradient_checkpointing=\"unsloth\")"},
    {"unsloth", "", "loss", "fused",
     "unsloth_zoo fused_losses/cross_entropy_loss.py (chunked lm_head + CE, no full logits)"},
    {"unsloth", "", "precision", "bf16", "unsloth FastLanguageModel.from_pretrained(dtype=bf16)"},
    {"unsloth", "qlora", "optimizer", "adamw-8bit", "unsloth notebooks: optim=\"adamw_8bit\""},
    {"mlx", "", "precision", "bf16", "mlx-lm trains in the model dtype; no master copy"},
    {"mlx", "", "checkpointing", "none", "mlx-lm lora.py CONFIG_DEFAULTS grad_checkpoint=False"},
    {"mlx", "", "optimizer_impl", "for-loop", "mlx.optimizers.Adam updates per array"},
}};

bool matches_framework(std::string_view row, std::string_view framework) {
  if (row == "*" || row == framework) return true;
  for (const FrameworkProfile& p : kProfiles) {
    if (p.name == framework && !p.base.empty()) return matches_framework(row, p.base);
  }
  return false;
}

const FrameworkProfile* find_profile(std::string_view name) {
  for (const FrameworkProfile& p : kProfiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool valid_version(std::string_view v) {
  if (v.empty() || v.front() == '.' || v.back() == '.') return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.';
  });
}

std::optional<std::string_view> version_of(const TrainingPlan& plan, std::string_view library) {
  for (const auto& [lib, version] : plan.library_versions) {
    if (lib == library) return std::string_view(version);
  }
  return std::nullopt;
}

bool in_range(const Difference& d, const TrainingPlan& plan) {
  if (d.library.empty()) return true;
  const auto v = version_of(plan, d.library);
  if (!v) return d.below.empty();  // current release: past every `below`
  if (!d.from.empty() && compare_versions(*v, d.from) < 0) return false;
  if (!d.below.empty() && compare_versions(*v, d.below) >= 0) return false;
  return true;
}

// A library's version, replacing one given before: the last one wins, as with repeated flags, and
// a plan holds one version per library (version_of reads the first).
void set_version(std::vector<std::pair<std::string, std::string>>& versions,
                 std::string_view library, std::string_view version) {
  for (auto& [lib, v] : versions) {
    if (lib == library) {
      v = std::string(version);
      return;
    }
  }
  versions.emplace_back(std::string(library), std::string(version));
}

Error framework_error(std::string reason) {
  return Error{ErrorCode::usage, "", "--framework", std::move(reason)};
}

std::string profile_names() {
  std::string out;
  for (const FrameworkProfile& p : kProfiles)
    out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

}  // namespace

std::span<const FrameworkProfile> framework_profiles() {
  return kProfiles;
}
std::span<const Difference> framework_differences() {
  return kDifferences;
}
std::span<const ProfileDefault> framework_defaults() {
  return kDefaults;
}
std::span<const std::string_view> versioned_libraries() {
  return kLibraries;
}

bool runs_transformers_models(std::string_view framework) {
  return matches_framework("hf", framework);
}

int compare_versions(std::string_view a, std::string_view b) {
  auto next = [](std::string_view& s) -> long long {
    if (s.empty()) return 0;
    const auto dot = s.find('.');
    const std::string_view part = s.substr(0, dot);
    s = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
    long long n = 0;
    for (char c : part) n = n * 10 + (c - '0');
    return n;
  };
  while (!a.empty() || !b.empty()) {
    const long long x = next(a);
    const long long y = next(b);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::optional<Error> parse_framework(std::string_view text, std::string& name,
                                     std::vector<std::pair<std::string, std::string>>& versions) {
  const auto at = text.find('@');
  const std::string_view n = text.substr(0, at);
  const FrameworkProfile* p = find_profile(n);
  if (p == nullptr) {
    std::string_view best;
    std::size_t best_d = 3;  // suggest only close names
    for (const FrameworkProfile& q : kProfiles) {
      const std::size_t d = edit_distance(n, q.name);
      if (d < best_d) {
        best_d = d;
        best = q.name;
      }
    }
    // DeepSpeed, FSDP and Megatron are how the run is spread over GPUs, not a profile of the step.
    const bool engine = parse_engine(n).has_value() && n != "ddp";
    return framework_error(
        fmt::format("'{}' is not a known framework{}; known: {}{}", n,
                    best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best), profile_names(),
                    engine ? fmt::format(" ({} is a layout across GPUs: --engine {})", n, n) : ""));
  }
  name = std::string(n);
  if (at != std::string_view::npos) {
    const std::string_view v = text.substr(at + 1);
    if (!valid_version(v)) {
      return framework_error(
          fmt::format("'{}' is not a version of {}: expected dotted numbers such as {}@4.43", v,
                      p->library, p->name));
    }
    set_version(versions, p->library, v);
  }
  return std::nullopt;
}

std::optional<Error> parse_library_versions(
    std::string_view text, std::vector<std::pair<std::string, std::string>>& versions) {
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string_view lib = item.substr(0, eq);
    if (std::find(kLibraries.begin(), kLibraries.end(), lib) == kLibraries.end()) {
      std::string known;
      for (std::string_view l : kLibraries) known += (known.empty() ? "" : ", ") + std::string(l);
      return Error{ErrorCode::usage, "", "--versions",
                   fmt::format("'{}' is not a library with version-dependent behaviour; known: {}",
                               lib, known)};
    }
    const std::string_view v = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    if (!valid_version(v)) {
      return Error{ErrorCode::usage, "", "--versions",
                   fmt::format("'{}' needs a version like {}=0.43.1", std::string(item), lib)};
    }
    if (lib == "cuda" && !gpu::cuda_runtime_of(v)) {
      return Error{ErrorCode::usage, "", "--versions",
                   fmt::format("'{}' is no CUDA runtime a torch build ships; give "
                               "torch.version.cuda, e.g. cuda=12.8",
                               std::string(item))};
    }
    set_version(versions, lib, v);
  }
  return std::nullopt;
}

std::string_view profile_default(std::string_view framework, std::string_view method,
                                 std::string_view flag,
                                 const std::vector<std::pair<std::string, std::string>>& versions) {
  const FrameworkProfile* profile = find_profile(framework);
  const auto in_versions = [&](const ProfileDefault& d) {
    if (d.from.empty() || profile == nullptr) return true;
    for (const auto& [lib, version] : versions) {
      if (lib == profile->library) return compare_versions(version, d.from) >= 0;
    }
    return true;  // the current release
  };
  for (const ProfileDefault& d : kDefaults) {
    if (d.framework == framework && d.flag == flag && (d.method.empty() || d.method == method) &&
        in_versions(d)) {
      return d.value;
    }
  }
  if (profile != nullptr && !profile->base.empty()) {
    return profile_default(profile->base, method, flag, versions);
  }
  return "";
}

std::vector<const Difference*> applied_differences(const TrainingPlan& plan) {
  std::vector<const Difference*> out;
  for (const Difference& d : kDifferences) {
    if (!matches_framework(d.framework, plan.framework)) continue;
    if (!d.method.empty() && d.method != name_of(plan.method)) continue;
    if (!in_range(d, plan)) continue;
    out.push_back(&d);
  }
  return out;
}

void apply_framework(TrainingPlan& plan) {
  plan.behaviour = FrameworkBehaviour{};
  for (const Difference* d : applied_differences(plan)) set_knob(plan.behaviour, d->knob, d->value);
}

}  // namespace trainmem

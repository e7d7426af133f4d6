// TrainingPlan: everything about a run except the model. Every field has a default and says what
// it trades; flags, plan files and the Python/web facade all fill this one struct.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainmem/dtype.h"
#include "trainmem/errors.h"
#include "trainmem/layout.h"

namespace trainmem {

// full: every parameter trains. lora: base frozen, low-rank adapters train. qlora: lora with the
// frozen base block-quantised. freeze: only chosen modules/layers train.
enum class Method { full, lora, qlora, freeze };

// Names in parentheses are the command line's (vocabulary.h lists every alias).
// autocast_bf16 ("bf16-mixed"): fp32 parameters (which are the master), fp32 grads, bf16 compute
// under torch.autocast: HF Trainer bf16=True, Lightning bf16-mixed. autocast_fp16 ("fp16-mixed"):
// the same with fp16 and a GradScaler (HF fp16=True; T4/V100 have no bf16). bf16 ("bf16"): model
// loaded in bf16, states in bf16, no master. bf16_mixed ("bf16-fp32-master"): bf16 weights and
// grads, fp32 master copy and states (DeepSpeed bf16, Megatron; 16 B/param with Adam; the seeds'
// "mixed precision", which the textbook convention keeps). fp16_mixed ("fp16-fp32-master"): as
// bf16_mixed with fp16. fp32: everything fp32.
enum class Precision { bf16_mixed, bf16, fp16_mixed, fp32, autocast_bf16, autocast_fp16 };

enum class OptimizerKind {
  adamw,
  adamw_8bit,
  paged_adamw,
  paged_adamw_8bit,
  adafactor,
  sgd,
  sgd_momentum,
  lion,
  lion_8bit,
  adam_mini,
  muon,
};

// PyTorch's implementation choice changes only the step's scratch memory.
enum class OptimizerImpl { foreach, fused, for_loop };

enum class Checkpointing { none, full, selective };
enum class Attention { eager, sdpa, flash };
// full: HF's logits + fp32 upcast. chunked: TRL chunked NLL. fused: Liger fused linear CE.
enum class Loss { full, chunked, fused };
// exact: what the framework allocates. textbook: the seeds' uniform arithmetic.
enum class Convention { exact, textbook };
enum class QuantKind { nf4, fp4, int8 };
// When the run evaluates between optimizer steps: HF TrainingArguments `eval_strategy` (no, every
// `eval_steps`, or at each epoch's end). steps and epoch run the same evaluation pass, so they
// price the same; no (the Trainer's default) prices none.
enum class EvalStrategy { no, steps, epoch };
// How the framework quantises the base weights while loading them (FrameworkBehaviour, the load
// phase of src/ledger/run_phases.cpp): which transient tensors one weight needs on the GPU.
enum class LoadQuantiser {
  none,               // not modelled (the HF from_pretrained path; no quantisation)
  lightning_bnb,      // lightning BitsandbytesPrecision _Linear4bit.quantize: bf16 + fp16 copy
  torchao_unchunked,  // torchao 0.1 to_nf4: (numel x 16) distances to the NF4 table, at once
  torchao_chunked,    // torchao >= 0.2 to_nf4: the distances per chunk of 1,048,576 elements
};

struct LoraPlan {
  std::int64_t rank = 16;  // r: adapter params per linear are r x (in + out)
  double alpha = 32;       // scaling only; no memory effect
  double dropout = 0.0;    // > 0 saves a dropout mask and a dropped copy of each adapted input
  // Module names: q,k,v,o,gate,up,down,lm_head,embed, or all-linear / attention / mlp; MoE
  // targets: experts, shared_experts, router.
  std::vector<std::string> targets = {"q", "k", "v", "o", "gate", "up", "down"};
  bool dora = false;  // DoRA adds one magnitude vector (out elements) per adapted linear
};

struct QuantPlan {
  QuantKind kind = QuantKind::nf4;
  bool double_quant = true;      // absmax quantised to 8 bits plus one fp32 per 256 blocks
  std::int64_t block_size = 64;  // weights per absmax (bitsandbytes 4-bit default)
  bool prepare_kbit = true;      // peft prepare_model_for_kbit_training: non-quantised -> fp32
};

struct FreezePlan {
  std::vector<std::string> train_modules;  // module names as in LoraPlan::targets, plus "norm"
  // Layer indices that train; empty = all layers. With LoRA/QLoRA: the layers adapted (PEFT
  // layers_to_transform).
  std::vector<std::int64_t> train_layers;
};

// How the framework that runs the step allocates, as knobs the ledger reads. The defaults are the
// Hugging Face behaviour (transformers >= 4.49 Trainer, PEFT, bitsandbytes >= 0.44); a framework
// profile (src/plan/framework.h, docs/frameworks.md) changes some of them when the plan is built.
struct FrameworkBehaviour {
  // The model output (logits) stays referenced through backward and into the next forward: a
  // plain `out = model(...); out.loss.backward()` loop, or litgpt's `logits = model(...)`.
  bool outputs_kept = false;
  // transformers < 4.46: LlamaForCausalLM.forward did `logits = logits.float()`, so the output
  // holds fp32 logits.
  bool fp32_logits_in_model = false;
  // transformers < 4.49: the loss made `logits[..., :-1, :].contiguous()`, a second fp32 copy.
  bool loss_shift_copy = false;
  // The loss upcasts logits to fp32 before log_softmax (HF ForCausalLMLoss, torchtune); litgpt's
  // chunked_cross_entropy runs on the compute dtype.
  bool loss_upcast = true;
  // The lm_head and the loss run per chunk: a fixed number of chunks (torchtune
  // num_output_chunks), or chunks of this many positions per sequence (litgpt
  // lm_head_chunk_size). 0: one piece.
  std::int64_t loss_chunks = 0;
  std::int64_t loss_chunk_positions = 0;
  // The recipe deletes the logits right after the loss (torchtune `del logits`).
  bool logits_freed_after_loss = false;
  // PEFT autocast_adapter_dtype=True keeps adapters in fp32; litgpt/torchtune/mlx build them in
  // the model dtype.
  bool adapters_fp32 = true;
  // The optimizer steps each parameter inside backward and frees its gradient (torchtune
  // optimizer_in_bwd): at most one gradient is live.
  bool optimizer_in_backward = false;
  // Checkpointed layer inputs are copied to host memory (torchtune enable_activation_offloading,
  // unsloth's offloaded gradient checkpointing): two layers' inputs stay on the device.
  bool offload_checkpoints = false;
  // bitsandbytes < 0.44: MatMul4Bit keeps its input for backward even though the 4-bit weight
  // gets no gradient.
  bool bnb_saves_4bit_input = false;
  // The batch carries a padding mask: SDPA repeats K/V to every head and saves a float mask.
  bool padding_mask = false;
  // Attention as litgpt writes it (CausalSelfAttention): one fused qkv projection; with as many
  // key/value heads as query heads SDPA saves v as a view of that output, keeping all of it; with
  // fewer, k and v are expanded to every head before SDPA. LoRA on q/k/v is one LoRAQKVLinear:
  // one dropout and one adapter input for the three.
  bool fused_qkv_attention = false;
  // TRL SFTTrainer logs mean_token_accuracy from `outputs.logits[..., :-1, :].contiguous()`: one
  // more copy of the logits at the end of forward.
  bool metrics_logits_copy = false;
  // cuBLAS workspaces come from PyTorch's caching allocator (CUDA). False on Apple/MLX.
  bool cublas_workspaces = true;
  // Apple unified memory (mlx): no CUDA context, no caching allocator.
  bool unified_memory = false;
  // mlx-lm adapts only the last N layers (lora_layers / num_layers, default 16); 0: all layers.
  std::int64_t lora_last_layers = 0;
  // Phases of the run beyond the training step (src/ledger/run_phases.cpp), for the frameworks
  // whose scripts run them in the process whose peak is reported:
  // a validation pass between optimizer steps under no_grad, with full (unchunked) logits
  // (litgpt finetune/*.py validate());
  bool eval_between_steps = false;
  // a sample generated with a KV cache after the validation pass (litgpt generate_example());
  bool generates_sample = false;
  // QLoRA: how the base weights are quantised on the GPU at load.
  LoadQuantiser load_quantiser = LoadQuantiser::none;
};

struct TrainingPlan {
  Method method = Method::full;
  // The library's neutral recipe (the seeds'); the command line and imports start from
  // hf_trainer_defaults() instead.
  Precision precision = Precision::bf16_mixed;
  OptimizerKind optimizer = OptimizerKind::adamw;
  OptimizerImpl optimizer_impl = OptimizerImpl::foreach;
  LoraPlan lora;
  QuantPlan quant;
  FreezePlan freeze;

  std::int64_t batch = 1;       // micro-batch per GPU, sequences
  std::int64_t seq = 1024;      // longest sequence in a batch, tokens (memory follows the longest)
  std::int64_t grad_accum = 1;  // micro-batches per optimizer step
  Checkpointing checkpointing = Checkpointing::none;
  Attention attention = Attention::sdpa;
  Loss loss = Loss::full;
  // The Trainer's evaluation between optimizer steps (run_phases.h): eval_strategy and
  // per_device_eval_batch_size, sequences per evaluation forward (HF's default 8; axolotl's is
  // micro_batch_size). Priced only when eval_strategy is not no.
  EvalStrategy eval_strategy = EvalStrategy::no;
  std::int64_t eval_batch = 8;
  // Whose allocation behaviour is modelled: a profile name from src/plan/framework.h (hf, trl,
  // litgpt, torchtune, unsloth, axolotl, mlx), and the versions given for it and its libraries
  // ("transformers=4.43", "bitsandbytes=0.41.1"); empty: current releases.
  std::string framework = "hf";
  std::vector<std::pair<std::string, std::string>> library_versions;
  FrameworkBehaviour behaviour;  // filled from the profile by make_plan / apply_framework
  // Price the kernels PyTorch picks on CPU instead of CUDA (set by `validate` for CPU traces;
  // see ActivationSettings::cpu_kernels).
  bool cpu_kernels = false;

  Convention convention = Convention::exact;
  std::int64_t params_override = 0;  // price this published count instead (0: use inventory)

  // How the run is spread over GPUs (docs/distributed.md). The default is one GPU.
  Layout layout;
};

// What the HF Trainer does on current torch with its defaults: bf16=True (fp32 weights under bf16
// autocast: autocast_bf16) and optim adamw_torch_fused (fused AdamW). plan_from() starts here.
TrainingPlan hf_trainer_defaults();

// The plan as its convention reads it: under textbook, bf16-mixed and fp16-mixed keep the seeds'
// meaning (16-bit weights with an fp32 master copy: bf16_mixed / fp16_mixed). estimate() prices
// this reading, so every caller gets it.
TrainingPlan under_convention(TrainingPlan plan);
// The plan as a JSON object with every field (docs/formats.md, "plan"), and back. Keys missing
// from the JSON keep their defaults; unknown keys, wrong types and unknown names are errors naming
// the key; the result has passed validate(). `file` names the source in errors.
std::string render_plan_json(const TrainingPlan& plan);
Result<TrainingPlan> plan_from_json(std::string_view text, const std::string& file = "plan");

// Checks ranges and combinations; the returned Error names the flag (e.g. "--batch").
std::optional<Error> validate(const TrainingPlan& plan);

// Canonical names used in reports and JSON; the parsers accept every alias of vocabulary.h.
std::string_view name_of(Method v);
std::string_view name_of(Precision v);
std::string_view name_of(OptimizerKind v);
std::string_view name_of(OptimizerImpl v);
std::string_view name_of(Checkpointing v);
std::string_view name_of(Attention v);
std::string_view name_of(Loss v);
std::string_view name_of(Convention v);
std::string_view name_of(QuantKind v);
std::string_view name_of(EvalStrategy v);

std::optional<Method> parse_method(std::string_view s);
std::optional<Precision> parse_precision(std::string_view s);
std::optional<OptimizerKind> parse_optimizer(std::string_view s);
std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view s);
std::optional<Checkpointing> parse_checkpointing(std::string_view s);
std::optional<Attention> parse_attention(std::string_view s);
std::optional<Loss> parse_loss(std::string_view s);
std::optional<Convention> parse_convention(std::string_view s);
std::optional<QuantKind> parse_quant(std::string_view s);
std::optional<EvalStrategy> parse_eval_strategy(std::string_view s);

}  // namespace trainmem

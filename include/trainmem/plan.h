// TrainingPlan: everything about a run except the model. Every field has a default and says what
// it trades; flags, plan files and the Python/web facade all fill this one struct.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/dtype.h"
#include "trainmem/errors.h"

namespace trainmem {

// full: every parameter trains. lora: base frozen, low-rank adapters train. qlora: lora with the
// frozen base block-quantised. freeze: only chosen modules/layers train.
enum class Method { full, lora, qlora, freeze };

// bf16_mixed: bf16 weights and grads, fp32 master copy and states (DeepSpeed/Megatron; 16 B/param
// with Adam). bf16: model loaded in bf16, states in bf16, no master (PyTorch default when the
// model is bf16). fp16_mixed: as bf16_mixed with fp16. fp32: everything fp32. autocast_bf16:
// fp32 parameters (which are the master), fp32 grads, bf16 compute under torch.autocast (HF
// Trainer with bf16=True on an fp32-loaded model).
enum class Precision { bf16_mixed, bf16, fp16_mixed, fp32, autocast_bf16 };

enum class OptimizerKind {
  adamw,
  adamw_8bit,
  paged_adamw,
  paged_adamw_8bit,
  adafactor,
  sgd,
  sgd_momentum,
  lion,
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

struct TrainingPlan {
  Method method = Method::full;
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
  std::string framework = "hf";  // whose allocation behaviour is modelled (HF transformers)
  // Price the kernels PyTorch picks on CPU instead of CUDA (set by `validate` for CPU traces;
  // see ActivationSettings::cpu_kernels).
  bool cpu_kernels = false;

  Convention convention = Convention::exact;
  std::int64_t params_override = 0;  // price this published count instead (0: use inventory)
};

// The plan as a JSON object with every field (docs/formats.md, "plan"), and back. Keys missing
// from the JSON keep their defaults; unknown keys, wrong types and unknown names are errors naming
// the key; the result has passed validate(). `file` names the source in errors.
std::string render_plan_json(const TrainingPlan& plan);
Result<TrainingPlan> plan_from_json(std::string_view text, const std::string& file = "plan");

// Checks ranges and combinations; the returned Error names the flag (e.g. "--batch").
std::optional<Error> validate(const TrainingPlan& plan);

// Names used on the command line and in JSON, and their parsers: one table per enum.
std::string_view name_of(Method v);
std::string_view name_of(Precision v);
std::string_view name_of(OptimizerKind v);
std::string_view name_of(OptimizerImpl v);
std::string_view name_of(Checkpointing v);
std::string_view name_of(Attention v);
std::string_view name_of(Loss v);
std::string_view name_of(Convention v);
std::string_view name_of(QuantKind v);

std::optional<Method> parse_method(std::string_view s);
std::optional<Precision> parse_precision(std::string_view s);
std::optional<OptimizerKind> parse_optimizer(std::string_view s);
std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view s);
std::optional<Checkpointing> parse_checkpointing(std::string_view s);
std::optional<Attention> parse_attention(std::string_view s);
std::optional<Loss> parse_loss(std::string_view s);
std::optional<Convention> parse_convention(std::string_view s);
std::optional<QuantKind> parse_quant(std::string_view s);

// All accepted names of an enum, for help text and "did you mean".
std::vector<std::string_view> names_of_methods();
std::vector<std::string_view> names_of_precisions();
std::vector<std::string_view> names_of_optimizers();

}  // namespace trainmem

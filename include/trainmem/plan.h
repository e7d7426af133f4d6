// The plan: everything about a run except the model. TrainingPlan and its layout over GPUs, the
// vocabulary of every setting's names, a plan from text settings (PlanPatch), framework profiles,
// and the checks of a plan against a model (targets that reach no module, the size limits).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/model.h"

namespace trainmem {

// Layout: how a training run is spread over GPUs. Part of the TrainingPlan; the default (one GPU,
// nothing sharded) prices exactly what estimate() prices. Every knob that changes per-rank memory
// is here with the engine's own default, so an emitted config and the estimate agree.

// Which engine shards the data-parallel replicas. ddp: torch DistributedDataParallel (nothing
// sharded). deepspeed: ZeRO stage `zero_stage`. fsdp: PyTorch FSDP, `fsdp_version` 1 or 2.
// megatron: Megatron-LM DDP, optionally with the distributed optimizer.
enum class Engine { ddp, deepspeed, fsdp, megatron };

// FSDP1 ShardingStrategy / FSDP2 equivalents (torch/distributed/fsdp/api.py:32-69, v2.15.0):
// full = FULL_SHARD (FSDP2 reshard_after_forward=True), grad_op = SHARD_GRAD_OP (False),
// hybrid = HYBRID_SHARD (shard inside a node, replicate across), none = NO_SHARD.
enum class FsdpMode { full, grad_op, hybrid, none };

enum class OffloadTarget { cpu, nvme };

struct DeepSpeedKnobs {
  // deepspeed/runtime/zero/config.py defaults (DeepSpeed @38327e07).
  std::int64_t reduce_bucket_size = 500'000'000;     // elements, config.py:109
  std::int64_t allgather_bucket_size = 500'000'000;  // elements, config.py:128
  std::optional<bool> overlap_comm;                  // unset: true only for stage 3, config.py:353
  bool contiguous_gradients = true;                  // config.py:98
  std::int64_t sub_group_size = 1'000'000'000;       // elements, config.py:168
  std::int64_t stage3_prefetch_bucket_size = 50'000'000;      // config.py:208
  std::int64_t stage3_param_persistence_threshold = 100'000;  // config.py:214
  std::int64_t stage3_max_live_parameters = 1'000'000'000;    // config.py:231
  bool zero_init = true;  // model built inside deepspeed.zero.Init (stage 3): no full copy per rank
};

struct FsdpKnobs {
  // FSDP1 defaults (v2.15.0): torch/distributed/fsdp/fully_sharded_data_parallel.py:404-411.
  bool limit_all_gathers = true;          // FSDP1 default: at most two units unsharded at once
  bool backward_prefetch = true;          // BACKWARD_PRE (FSDP1); FSDP2 always prefetches
  bool forward_prefetch = false;          // FSDP1 default
  bool cpu_ram_efficient_loading = true;  // only rank 0 of a node materialises the model on CPU
  // FSDP2 units of their own for the input embedding and the output projection, outside the
  // root (torchtune's custom_sharded_layers: ['tok_embeddings', 'output']): resharded after their
  // forward instead of held, as the root is, from forward to the end of backward.
  bool embedding_unit = false;
  bool head_unit = false;
};

struct Layout {
  std::int64_t gpus_per_node = 1;
  std::int64_t nodes = 1;
  Engine engine = Engine::ddp;
  int zero_stage = 0;  // DeepSpeed ZeRO 0..3 (engine == deepspeed)
  FsdpMode fsdp = FsdpMode::full;
  int fsdp_version = 2;
  std::int64_t tp = 1;  // tensor parallel (Megatron column/row split)
  bool sequence_parallel = false;
  std::int64_t pp = 1;                 // pipeline stages (1F1B)
  std::int64_t virtual_stages = 1;     // interleaved 1F1B chunks per rank
  std::int64_t cp = 1;                 // context parallel
  std::int64_t ep = 1;                 // expert parallel (MoE)
  bool distributed_optimizer = false;  // Megatron --use-distributed-optimizer
  bool offload_optimizer = false;
  bool offload_params = false;
  OffloadTarget offload_to = OffloadTarget::cpu;
  bool pin_memory = true;  // pinned host buffers for offloaded states
  // torch/nn/parallel/distributed.py:31 (v2.15.0): bucket_cap_mb defaults to 25 MiB; while it is
  // left unset the first bucket is 1 MiB (:108-110; reducer.hpp:30 kDefaultFirstBucketBytes).
  double ddp_bucket_cap_mb = 25;
  bool gradient_as_bucket_view = false;  // DDP default: buckets are a second copy of the grads
  DeepSpeedKnobs deepspeed;
  FsdpKnobs fsdp_knobs;
};

std::int64_t world_size(const Layout& l);
// Data-parallel replicas: world / (tp * pp * cp). Expert parallel splits experts inside it.
std::int64_t data_parallel_size(const Layout& l);
// The group a ZeRO/FSDP state is sharded over: the DP size, or the node's share for hybrid.
std::int64_t shard_group_size(const Layout& l);
// True when the plan runs on one GPU with nothing sharded (estimate() is the whole answer).
bool is_single_device(const Layout& l);
// DeepSpeed overlap_comm after its validator: the explicit value, else stage 3.
bool overlap_comm(const Layout& l);

// Plan-only checks (ranges, engine combinations); the Error names the flag.
std::optional<Error> validate_layout(const Layout& l);
// Checks against the model: tp divides heads and kv heads, pp <= layers, ep divides experts.
std::optional<Error> validate_layout(const Layout& l, const ModelSpec& spec);

// The engine a layout runs when none is named: model parallelism (tp, pp, cp or ep above 1)
// without a data-parallel engine is Megatron-LM's, else plain DDP. The command line's --tp/--pp
// and a plan file's layout without "engine" both take it.
Engine implied_engine(const Layout& l);

std::string_view name_of(Engine v);
std::string_view name_of(FsdpMode v);
std::string_view name_of(OffloadTarget v);
std::optional<Engine> parse_engine(std::string_view s);
std::optional<FsdpMode> parse_fsdp_mode(std::string_view s);
std::optional<OffloadTarget> parse_offload_target(std::string_view s);
// torchtune's custom_sharded_layers as a list ("tok_embeddings,output", or the YAML list as
// written): sets the FSDP2 units of their own it names, the input embedding or the output
// projection (HF's embed_tokens and lm_head name them too). Returns the first name that is
// neither, for the error.
std::optional<std::string> set_separate_units(std::string_view list, FsdpKnobs& knobs);
// "ZeRO-3, 8 GPUs (1 node x 8)", "FSDP2 FULL_SHARD, TP 2, PP 4, 64 GPUs (8 nodes x 8)".
std::string describe(const Layout& l);

// TrainingPlan: everything about a run except the model. Every field has a default and says what
// it trades; flags, plan files and the Python/web facade all fill this one struct.

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
  adamw_32bit,  // bitsandbytes' 32-bit AdamW: fp32 states whatever the parameter dtype
  lion_32bit,   // bitsandbytes' 32-bit Lion (HF optim lion_32bit)
  paged_lion,
  paged_lion_8bit,
  rmsprop_32bit,  // bitsandbytes RMSprop (HF rmsprop_bnb)
  rmsprop_8bit,
  ademamix,  // bitsandbytes AdEMAMix: two first moments and one second
  ademamix_8bit,
  paged_ademamix,
  paged_ademamix_8bit,
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
  // PEFT modules_to_save: embed and/or lm_head, each trained as a full copy beside its frozen
  // original (peft/utils/other.py ModulesToSaveWrapper deep-copies the module).
  std::vector<std::string> modules_to_save;
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
// Hugging Face behaviour (transformers >= 4.49 Trainer, PEFT, bitsandbytes >= 0.43.2); a framework
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
  // bitsandbytes < 0.43.2: MatMul4Bit keeps its input in ctx.tensors even though the 4-bit weight
  // gets no gradient, and backward does not release it: it lives as long as the autograd graph.
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
  // The framework builds its own model class with a separate lm_head even where the HF config
  // ties it to the embeddings (litgpt GPT: nn.Linear lm_head and nn.Embedding wte; the checkpoint
  // converter copies the embedding into lm_head): one more V x h weight.
  bool unties_embeddings = false;
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
  // QLoRA quantises the lm_head too. transformers keeps it 16-bit (get_keys_to_not_convert);
  // Lightning's BitsandbytesPrecision replaces every nn.Linear unless ignore_modules names it, and
  // litgpt passes none.
  bool quantises_lm_head = false;
  // The routed experts of an MoE layer are nn.Linear modules in an nn.ModuleList (transformers
  // < 5, e.g. v4.57 Qwen3MoeSparseMoeBlock): bitsandbytes replaces them with Linear4bit like any
  // other linear, and PEFT target_modules names (gate_proj, all-linear) reach them. transformers 5
  // fuses them into 3-D nn.Parameters (Qwen3MoeExperts.gate_up_proj): bitsandbytes' conversion
  // replaces nn.Linear only and skips them (bitsandbytes issue #1849), so under QLoRA they stay in
  // the loaded dtype, and prepare_model_for_kbit_training then casts them to fp32 like every
  // other non-Params4bit parameter; names no longer reach them (PEFT target_parameters does).
  bool experts_as_linears = false;
  // A framework's own patch quantises the fused 3-D experts to 4-bit (unsloth-zoo PR #527,
  // temporary_patches/moe_utils.py: expert nn.Parameters become Params4bit).
  bool quantises_fused_experts = false;
  // torch.compile wraps the loss (torchtune `compile: True` compiles the loss with the layers;
  // HF TrainingArguments torch_compile compiles the model's forward, loss included): inductor
  // fuses `cross_entropy(logits.float(), labels)` into one kernel that saves the logits in their
  // own dtype, the labels and two fp32 values per row (row max and logsumexp) instead of the fp32
  // log_softmax, and its backward writes one gradient. Measured on CPU with torch 2.4.1 and 2.5.1
  // inductor (validation/compile_loss_probe.py, validation/data/compile-loss-probe-torch*.json).
  // The decoder layers are priced compiled by compiled_layers.
  bool compiled_loss = false;
  // torch.compile wraps each decoder layer (torchtune `compile: True` compiles every layer, HF
  // torch_compile the whole model). AOTAutograd's min-cut partitioner
  // (torch/_functorch/partitioners.py min_cut_rematerialization_partition, torch 2.5.1:
  // get_default_op_list puts mm/bmm/SDPA in compute_intensive_ops, never recomputed, and every
  // pointwise op in recomputable_ops; should_ban_recomputation keeps a reduction 4x smaller than
  // its input) saves matmul outputs and recomputes pointwise ops in backward. Measured on CPU with
  // torch 2.5.1 for a bf16 Llama decoder layer (validation/compile_layer_probe.py,
  // validation/data/compile-layer-probe-torch2.5.1.json): an RMSNorm keeps its bf16 input and
  // rstd (no fp32 copy, no normalized tensor), the gated MLP keeps the gate and up outputs (not
  // act(gate)); linear inputs, LoRA terms and attention are as eager
  // (src/ledger/activation_model.cpp).
  bool compiled_layers = false;
  // The forward builds a DynamicCache of every layer's key and value states and the model output
  // carries it: HF `use_cache`, which a model call takes from the config (True in most configs;
  // transformers utils/generic.py merge_with_config_defaults) unless gradient checkpointing turns
  // it off. The Trainer before transformers 5 leaves the config's value; 5 sets it from
  // TrainingArguments.use_cache, default False (PR #41585); TRL >= 0.22 passes use_cache=False
  // (PR #3891). A custom loop calling `model(**batch)` builds it. Held by the output: to the end
  // of the loss when the loop drops the output, into the next forward when it keeps it
  // (outputs_kept). src/ledger/activations.cpp prices it (activations.kv_cache).
  bool kv_cache_in_output = false;
  // The DynamicCache copies the first key/value states it stores (transformers 5 cache_utils.py
  // DynamicLayer.update: torch.cat onto an empty tensor), so the attention reads the copies and a
  // value state that was a view of a fused projection no longer keeps that output alive.
  // transformers 4.46.3 stored the states as they were; the release in between that changed it was
  // not read, and below 5 the view is priced kept (the larger side).
  bool cache_copies_states = true;
  // Gradient checkpointing makes the embedding output require grad whatever trains
  // (enable_input_require_grads), so a frozen prefix of layers keeps its checkpointed inputs and
  // runs its backward: transformers >= 5 gradient_checkpointing_enable does it for every decoder
  // model; PEFT does it for adapters in any version (the LoRA rule, activation_model.cpp).
  bool checkpointing_input_grads = true;
  // With a bitsandbytes 8-bit optimizer the HF Trainer registers a 32-bit override for every
  // nn.Embedding weight (GlobalOptimManager.register_module_override(module, "weight",
  // {"optim_bits": 32})), so a trained embedding keeps fp32 states: transformers >= 4.52
  // trainer.py create_optimizer; before, its `optimizer_cls.__name__ == "Adam8bit"` test never
  // matched the AdamW class it builds.
  bool bnb_embeddings_32bit = true;
  // The framework runs its own model classes, not transformers' (litgpt's GPT), and the layers
  // are priced as its code builds them (plan/framework_layers.h): the next three knobs.
  // The model classes apply the config's dropout (attention, residual, embedding). litgpt's GPT
  // has no dropout modules and calls SDPA with dropout_p=0.0, whatever the config's pdrop says.
  bool model_dropout = true;
  // The MLP's GELU is torch.nn.functional.gelu(approximate=...), one op that saves its input,
  // where transformers' gelu_new and gelu_fast compose the tanh form in Python and save several
  // tensors (litgpt GptNeoxMLP / GemmaMLP).
  bool fused_gelu = false;
  // RMSNorm multiplies the weight into the fp32 normalised tensor, `(x_normed *
  // weight.float()).to(dtype)` (litgpt RMSNorm since lit-gpt #606), as GemmaRMSNorm does, where
  // LlamaRMSNorm casts back first: with a trained weight the saved normalised tensor is fp32.
  bool rms_norm_fp32_weight = false;
  // The model call computes the loss (HF: labels passed, `outputs.loss`). Off where the loop
  // computes it from the returned logits (litgpt `chunked_cross_entropy(logits, ...)`, torchtune
  // `self._loss_fn(logits, labels)`): the loss then runs after the forward has returned, so a
  // kept previous step's logits (outputs_kept), released when `logits = model(...)` rebinds, are
  // gone before the loss's tensors exist.
  bool loss_in_model = true;
  // While accumulating, the loop skips the gradient reduction on every micro-batch but the last:
  // accelerate's Accelerator.accumulate (no_sync; FSDP2 set_requires_gradient_sync(False), unless
  // GradientAccumulationPlugin(sync_each_batch=True)), Lightning Fabric's no_backward_sync
  // (litgpt). Under FSDP each unit then keeps its gradients unsharded until the reduction.
  bool skips_grad_sync_while_accumulating = true;
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
  // PYTORCH_CUDA_ALLOC_CONF of the run ("": PyTorch's defaults): the caching allocator the GPU
  // replay models (docs/gpu.md), for every command's verdict. The command line takes --alloc-conf,
  // else the environment variable.
  std::string alloc_conf;

  Convention convention = Convention::exact;
  std::int64_t params_override = 0;  // price this published count instead (0: use inventory)

  // How the run is spread over GPUs (docs/distributed.md). The default is one GPU.
  Layout layout;
};

// What the HF Trainer does on current torch with its defaults: bf16=True (fp32 weights under bf16
// autocast: autocast_bf16) and optim adamw_torch_fused (fused AdamW). plan_from() starts here.
TrainingPlan hf_trainer_defaults();

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

std::optional<Convention> parse_convention(std::string_view s);

// The vocabulary of a plan: for each enumerated setting, its canonical names and the spellings the
// ecosystem uses for the same thing (PEFT module names, the HF Trainer's `optim` strings,
// `attn_implementation` values, Lightning precision names). One table per setting, defined in
// src/plan/vocabulary.cpp; the command line's parsing, its help text, the JSON, the importers of
// other tools' configs and docs/formats.md all read these tables.

struct Term {
  std::string name;                  // canonical: printed in reports and JSON
  std::vector<std::string> aliases;  // other spellings accepted as this term
  std::string meaning;               // one line for help and docs
};

// A name the ecosystem uses that trainmem knows and does not price, with the reason its error
// gives (HF `optim` strings whose state or step is not modelled).
struct RefusedName {
  std::string name;
  std::string reason;
};

struct Vocabulary {
  std::string flag;  // "--optimizer": named in errors
  std::vector<Term> terms;
  std::vector<RefusedName> refused = {};
};

// Matching ignores case and treats '_' and '-' alike (adamw_8bit = adamw-8bit = AdamW-8bit).
const Term* find_term(const Vocabulary& vocabulary, std::string_view text);
// The term `text` names, or a usage error naming the flag, the nearest names ("did you mean")
// and everything accepted.
Result<const Term*> resolve_term(const Vocabulary& vocabulary, std::string_view text);
// "full | lora | qlora (aliases: ...)": canonical names, then every alias, for --help.
std::string help_names(const Vocabulary& vocabulary);

const Vocabulary& method_vocabulary();
const Vocabulary& precision_vocabulary();
const Vocabulary& optimizer_vocabulary();
const Vocabulary& optimizer_impl_vocabulary();
const Vocabulary& checkpointing_vocabulary();
const Vocabulary& attention_vocabulary();
const Vocabulary& loss_vocabulary();
const Vocabulary& convention_vocabulary();
const Vocabulary& quant_vocabulary();
const Vocabulary& eval_strategy_vocabulary();
const Vocabulary& framework_vocabulary();
// LoRA target names (--lora-targets) with PEFT's module names (q_proj, gate_proj, ...) as aliases;
// --train-modules accepts these and "norm".
const Vocabulary& lora_target_vocabulary();

// The --optimizer-impl an HF `optim` string implies (adamw_torch_fused: "fused"; adamw_torch:
// "foreach"); nullopt when the spelling says nothing about the implementation.
std::optional<std::string_view> implied_optimizer_impl(std::string_view optimizer_text);

// Every vocabulary, in the order docs/formats.md lists them.
std::vector<const Vocabulary*> all_vocabularies();

// "24 GB" style counts of tokens: "4k" = 4,096, "32K" = 32,768, "1m" = 1,048,576 (context lengths
// are powers of two: Qwen's "32k context" is max_position_embeddings 32768), or a plain integer.
Result<std::int64_t> parse_tokens(std::string_view text, const std::string& field);

// A plan as text settings: what a command line, a measurement row or an imported config
// (TRL, PEFT, axolotl, ...) says about a run, applied to TrainingPlan's defaults in order (later
// settings win, as in argparse). Keys are snake_case, as in JSON and validation/data.

struct PlanSetting {
  std::string key;         // "optimizer", "seq", "lora_targets", ... (plan_setting_keys())
  std::string value;       // as typed: "paged_adamw_8bit", "4k", "q_proj, v_proj"
  std::string origin;      // who said it, for errors and notes: "--optim", "sft.yaml: optim"
  bool from_file = false;  // imported rather than typed: a setting with no effect is a note
};
using PlanPatch = std::vector<PlanSetting>;

// The keys apply_settings understands, in the order the command line applies them.
const std::vector<std::string>& plan_setting_keys();
// Whether a setting's value is a list (comma-separated: lora_targets, modules_to_save,
// train_modules, train_layers); every other setting takes one value.
bool setting_takes_list(std::string_view key);

// A plan written as settings (key, value), in plan_setting_keys() order; keys with no value in a
// plan (params) are absent. Applied as settings, they give the plan back.
PlanPatch settings_of(const TrainingPlan& plan);
// settings_of(hf_trainer_defaults()): where a form starts so that it prices what the command line
// prices with no flags (the web page sends only the settings that differ from these).
PlanPatch default_settings();

struct PlanResult {
  TrainingPlan plan;
  std::vector<std::string> notes;  // settings that were read but change nothing, and why
};

// hf_trainer_defaults() with `patch` applied in order, then validate(). Errors name the origin of
// the setting. A typed setting with no effect under the chosen method (--lora-rank with --method
// full,
// --quant without qlora) is an error; an imported one is a note. Under the textbook convention
// bf16-mixed and fp16-mixed keep the seeds' meaning: 16-bit weights with an fp32 master copy.
Result<PlanResult> plan_from(const PlanPatch& patch);

// Checks and notes that need the plan together with the model (and the device): a LoRA target
// that reaches no module of this model is an error; a sequence beyond the model's context, flash
// attention on a device without it, and QLoRA on Apple are notes.

struct Device;  // device.h

// As PEFT: when none of the names reaches a tensor of the model, an error naming the modules that
// exist (--lora-targets router on a dense model); some unmatched names are a note (plan_notes).
std::optional<Error> check_targets(const LoadedModel& model, const TrainingPlan& plan);

// A checkpoint saved quantised by bitsandbytes (ModelSpec::checkpoint_quant, as unsloth's
// *-bnb-4bit uploads are) loads quantised whatever the plan says: an error unless the plan is
// QLoRA with the checkpoint's storage, naming the flags that price it. Other quantisers are a
// note (plan_notes).
std::optional<Error> check_checkpoint_quant(const LoadedModel& model, const TrainingPlan& plan);

// Notes on combinations that price fine but will not run as priced. `device` may be null.
std::vector<std::string> plan_notes(const LoadedModel& model, const TrainingPlan& plan,
                                    const Device* device);

// What trainmem can price, and the up-front check that a plan is inside it. Derived from one rule:
// every byte count is an exact int64 (at most 2^63 - 1 bytes, 8 EiB). The core multiplies a
// plan's largest element figure by small constants (bytes per element, saved copies per layer,
// at most 2^11 together), so the largest figure may be 2^52 elements; check_plan_size() computes
// those figures with checked arithmetic and refuses a plan past it before anything is priced.
// docs/reliability.md.

// The largest element figure a plan may have (parameters, tokens x width x layers, ...).
inline constexpr std::int64_t kMaxFigureElements = std::int64_t{1} << 52;

// Structure caps where a model could not exist: published decoders have at most a few hundred
// layers (Llama 3.1 405B: 126) and a few hundred routed experts (Kimi K2: 384). The caps bound
// the work done per layer and per expert, not the sizes (those follow kMaxFigureElements).
inline constexpr std::int64_t kMaxLayers = 1024;
inline constexpr std::int64_t kMaxExperts = 65536;

// nullopt when every figure of (model, plan) fits the rule above; else an error naming the
// figure, its size, and the limit.
std::optional<Error> check_plan_size(const LoadedModel& model, const TrainingPlan& plan);

// nullopt when the plan's choices exist in the model: --train-layers names layers it has.
std::optional<Error> check_plan_matches_model(const LoadedModel& model, const TrainingPlan& plan);

// Every check of a plan against its model, in the order the command line reports them: the
// layout (validate_layout with the model's heads, layers and experts), check_plan_matches_model,
// check_plan_size, check_checkpoint_quant and check_targets. The command line, the Python module
// and the web page all run this once the model is loaded, so none of them prices a plan another
// refuses.
std::optional<Error> check_plan_for_model(const LoadedModel& model, const TrainingPlan& plan);

}  // namespace trainmem

// The activation model: what autograd saves for backward in one decoder layer of a Hugging Face
// transformers model, as named terms in bytes per token (plus bytes per attention-score element
// for eager attention). One function per block; every term cites the source that saves it.
// docs/method.md (section "activations") derives each term; research notes: accounting.md 2-7.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// One saved tensor (or a family of them) in one layer.
struct ActivationTerm {
  std::string name;                  // "input_layernorm: fp32 copy of the input (pow)"
  std::int64_t bytes_per_token = 0;  // bytes per token of the micro-batch
  std::int64_t bytes_per_score = 0;  // bytes per element of the b x heads x s x s scores
  std::int64_t bytes_per_pair = 0;   // bytes per element of the b x s x s mask
  const char* source = "";           // the framework code that saves it (a literal)
  std::int64_t bytes_fixed = 0;      // bytes per layer whatever the batch (DoRA's identity)
  // Held past its node's backward by an object the loop keeps rather than saved by the node: a
  // custom Function that stores the tensor as a plain ctx attribute (bitsandbytes < 0.43.2
  // MatMul4Bit ctx.tensors) keeps it until the graph itself is freed, and a DynamicCache in a
  // kept model output (output_cache) until the loop drops the output.
  bool held_by_graph = false;
  // A key or value state in the model output's DynamicCache (ActivationSettings::output_cache).
  // With held_by_graph the loop keeps the output; without it the output dies with the loss, so
  // the term lives to the end of forward and is not among the tensors saved for backward.
  bool output_cache = false;
};

// True for a term that lives only until the loss returns (a DynamicCache in an output the loop
// drops): not saved for backward, priced by its own line (activations.cpp
// add_output_cache_until_loss).
inline bool until_loss(const ActivationTerm& t) {
  return t.output_cache && !t.held_by_graph;
}

// A set of roles, one bit per Role value.
using RoleSet = std::uint64_t;
constexpr RoleSet role_bit(Role r) {
  return RoleSet{1} << static_cast<int>(r);
}

// How the plan leaves one decoder layer.
struct LayerPlan {
  std::int64_t layer = 0;
  bool input_requires_grad = false;  // the residual entering the layer requires grad
  RoleSet trainable = 0;             // dense (non-expert) parameters of the layer that train
  RoleSet trainable_routed = 0;      // routed-expert parameters that train
  RoleSet trainable_shared = 0;      // shared-expert parameters that train
  RoleSet adapted = 0;               // linears carrying a LoRA adapter (dense and shared)
  bool adapted_experts = false;      // routed experts carry adapters
};

// A DynamicCache in the model output (FrameworkBehaviour::kv_cache_in_output, without gradient
// checkpointing): none; held until the loss returns (the loop drops the output); or kept by the
// loop into the next forward (outputs_kept).
enum class OutputCache { none, until_loss, kept };

// Framework behaviour that changes what is saved. Defaults: HF transformers >= 4.48, torch >= 2.5,
// no padding mask (packed or equal-length batches), PEFT adapters upcast to fp32.
struct ActivationSettings {
  Attention attention = Attention::sdpa;
  bool padding_mask = false;  // an attention mask: SDPA repeats K/V and saves a float mask
  bool autocast = false;      // fp32 weights, bf16 matmuls under torch.autocast
  int stream_bytes = 2;       // residual stream / norm dtype (4 when fp32)
  int compute_bytes = 2;      // dtype of linear outputs and most saved tensors
  // Dtype of the routed experts' matmuls and of what they save. transformers 5 fuses the experts
  // into 3-D parameters run by grouped_mm, which autocast does not cast: the input is cast to the
  // weights' dtype (integrations/moe.py _grouped_mm), so under autocast they run in fp32.
  int expert_bytes = 2;
  bool experts_autocast = false;  // the routed experts are nn.Linears autocast casts (< 5)
  std::int64_t lora_rank = 0;     // 0: no adapters
  double lora_dropout = 0.0;      // > 0: a bool mask and a dropped copy per adapted input
  bool dora = false;              // PEFT use_dora: DoraLinearLayer's extra saved tensors
  int adapter_bytes = 4;          // PEFT autocast_adapter_dtype: fp32 adapters on a bf16 base
  // Kernels PyTorch picks on CPU rather than CUDA (used to price CPU traces; docs/accuracy.md):
  // dropout saves a noise tensor of the input dtype instead of a bool mask, and SDPA with
  // dropout runs the math kernel instead of a fused one.
  bool cpu_kernels = false;
  std::int64_t seq = 0;    // sequence length: a sliding window shorter than it materialises a mask
  std::int64_t batch = 1;  // micro-batch: eager's bmm reshape copies a strided v only past 1
  bool bnb_saves_input = false;      // bitsandbytes < 0.43.2: every 4-bit linear keeps its input
  bool lm_head_quantised = false;    // the lm_head is a 4-bit linear too (quantises_lm_head)
  bool fused_qkv_attention = false;  // litgpt CausalSelfAttention (FrameworkBehaviour)
  // With fused_qkv_attention and LoRA: which of q, k, v litgpt's LoRAQKVLinear adapts
  // (enable_lora), from the plan's targets.
  bool lora_q = false, lora_k = false, lora_v = false;
  // torch.compile'd decoder layers (FrameworkBehaviour::compiled_layers): in a layer of the probed
  // kind (a Llama layer, compiled_layer_probed in the .cpp) RMSNorms, the SwiGLU MLP and LoRA's
  // input casts take the saved set the min-cut partitioner leaves (probed on CPU, bf16,
  // validation/data/compile-layer-probe-torch2.5.1.json); attention and linear inputs are as eager.
  bool compiled_layers = false;
  OutputCache output_cache = OutputCache::none;
  // The lm_head runs on the whole batch and saves its input for the weight gradient. Not under
  // TRL's chunked loss (Loss::chunked), which runs it on chunks of its own reordered copy
  // (logits.cpp trl_chunked_loss).
  bool head_saves_input = true;
  bool cache_copies_states = true;  // FrameworkBehaviour::cache_copies_states
};

// Tensors of the MLP width the activation saves for backward, by autograd's rules
// (transformers activations.py; PyTorch derivatives.yaml): silu, gelu and gelu_pytorch_tanh save
// their input; relu its result; quick_gelu x and sigmoid(1.702x); gelu_new (Python tanh form)
// x, tanh(...), 0.5x and 1 + tanh(...); gelu_fast seven (see the .cpp).
int activation_saved_tensors(Activation act);

// Bytes per element a training-mode dropout keeps for backward: a bool mask on CUDA
// (native_dropout), the scaled noise in the input's dtype on CPU (Dropout.cpp _dropout_impl).
int dropout_mask_bytes(const ActivationSettings& settings, int input_bytes);

// Which attention kernel runs: eager, a fused SDPA kernel (flash / memory-efficient, which keep
// q, k, v, out and logsumexp), or SDPA's math kernel (keeps the scores).
enum class AttentionKernel { eager, fused, math };
AttentionKernel attention_kernel(const ModelSpec& spec, const ActivationSettings& settings);

// Embedding dropout (GPT-2 embd_pdrop, Phi, GPT-NeoX, StarCoder2): its mask, bytes per token,
// saved when the embedding output requires grad.
std::int64_t embedding_dropout_bytes_per_token(const ModelSpec& spec,
                                               const ActivationSettings& settings);

// The settings a plan implies (precision, method, attention, LoRA).
ActivationSettings activation_settings(const TrainingPlan& plan);

// Whether enable_input_require_grads hooks the input embedding's output to require grad: PEFT
// calls it under gradient checkpointing, transformers >= 5 for every decoder model
// (FrameworkBehaviour::checkpointing_input_grads; transformers modeling_utils.py).
bool input_require_grads_hooked(const TrainingPlan& plan);

// Per-layer plans from the inventory's trainable flags and the plan's LoRA targets.
std::vector<LayerPlan> layer_plans(const ModelSpec& spec, const ParameterInventory& inv,
                                   const TrainingPlan& plan);

// Every term one layer saves, in forward order.
// `no_grad_inputs`, when given, receives the linears whose matmul input does not require grad
// (a frozen layer's q/k/v reading the embedding's output, a parallel block's MLP beside an adapted
// attention): their weight is not saved for backward, so an autocast copy of it dies with the
// matmul. Only the dense attention and MLP projections are recorded (q, k, v, qkv, o, gate, up,
// gate_up, down).
std::vector<ActivationTerm> layer_terms(const ModelSpec& spec, const LayerPlan& layer,
                                        const ActivationSettings& settings,
                                        RoleSet* no_grad_inputs = nullptr);

// True when layer_terms() returns the same terms for a and b: the plans agree in everything but
// the index, and the layers agree in what layer_terms reads of the index (a sliding window, MoE).
// A dense model's layers are alike, so the terms are built once and copied (docs/performance.md).
bool same_layer_terms(const ModelSpec& spec, const LayerPlan& a, const LayerPlan& b);

// After the last layer: the final norm and the lm_head input (bytes per token).
// `lm_head_adapted`: the head carries a LoRA adapter (its dropout mask, lora_A's input and
// output are saved like a layer linear's).
std::vector<ActivationTerm> final_terms(const ModelSpec& spec, bool input_requires_grad,
                                        bool norm_trainable, bool lm_head_trainable,
                                        const ActivationSettings& settings,
                                        bool lm_head_adapted = false);

// Bytes per token of one layer's key and value states in a DynamicCache: 2 x kv heads x head_dim
// x compute bytes (MLA: heads x (q/k head width + v head width)). transformers 5 cache_utils.py
// DynamicLayer.update concatenates the new states onto an empty tensor, a copy the attention then
// reads (4.x stored them as they were; cache_copies_states); the sliding-window layer keeps a
// slice of that copy, which keeps all of it.
std::int64_t kv_cache_bytes_per_token(const ModelSpec& spec, const ActivationSettings& settings);

// Bytes per token, and per attention score, summed over terms (until_loss terms excluded).
std::int64_t terms_per_token(const std::vector<ActivationTerm>& terms);
std::int64_t terms_per_score(const std::vector<ActivationTerm>& terms);

// Which terms a sum takes: every saved one, those a node frees in backward, those held past it
// (held_by_graph), or those that live only until the loss returns (until_loss, never in the
// other sums).
enum class TermLife { any, freed_in_backward, held_by_graph, until_loss };

// Sum of terms for a micro-batch of `batch` sequences of `seq` tokens.
std::int64_t terms_bytes(const std::vector<ActivationTerm>& terms, const ModelSpec& spec,
                         std::int64_t batch, std::int64_t seq, TermLife which = TermLife::any);

// True when some term is held by the graph (ActivationTerm::held_by_graph).
bool any_held_by_graph(const std::vector<ActivationTerm>& terms);

// Transient of one layer's backward on top of what it saved: the MLP's gate/up gradients
// (2 x N x I x compute bytes, accounting.md 2.7) and eager softmax backward (10 B per score).
std::int64_t layer_backward_transient_bytes(const ModelSpec& spec, std::int64_t layer,
                                            const ActivationSettings& settings, std::int64_t batch,
                                            std::int64_t seq);

// Korthikanti et al. (arXiv:2205.05198) per layer: s b h (34 + 5 a s / h) bytes.
std::int64_t korthikanti_layer_bytes(const ModelSpec& spec, std::int64_t batch, std::int64_t seq);

}  // namespace trainmem

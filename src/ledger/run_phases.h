// Phases of a run beyond the training step: loading the model (QLoRA: quantising the base
// weights on the GPU) and the validation pass / sample generation some frameworks run between
// optimizer steps. The published figures are torch.cuda.max_memory_allocated() / _reserved() over
// the whole process, so these phases count wherever the framework's source shows them
// (FrameworkBehaviour's eval_between_steps, generates_sample and load_quantiser;
// docs/frameworks.md).
//
// They live in existing phase slots, because that is when they happen:
//   load        first step `loaded` (before the first forward; no optimizer state yet);
//   evaluation  steady state `loaded` (after optimizer.step() and zero_grad(), before the next
//   generation  forward: weights, optimizer state and the loop's kept logits are live); the
//               two run one after the other, so only the larger of them is a line.
// The Hugging Face Trainer's evaluation (TrainingPlan::eval_strategy, --eval-strategy) lives in the
// same slot: `_maybe_log_save_evaluate` runs after optimizer.step() and model.zero_grad().
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "ledger/context.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"

namespace trainmem::ledger {

// The validation loss on full logits (litgpt finetune/lora.py:376-379 validate():
// `logits = model(input_ids)`, then chunked_cross_entropy(logits[..., :-1, :], ..., chunk_size=0)
// = cross_entropy(logits.reshape(-1, V)) (utils.py:325-328)). Bytes of each tensor alive when
// log_softmax's output is made (no_grad: nothing is saved for backward).
struct EvalLossChain {
  std::int64_t output_bytes = 0;       // lm_head output: batch x seq x vocab x out_bytes
  std::int64_t shift_copy_bytes = 0;   // reshape of the non-contiguous [..., :-1, :] view copies
                                       // (batch > 1; with batch 1 the slice is contiguous)
  std::int64_t upcast_bytes = 0;       // fp32 copy when the loss upcasts bf16 logits
  std::int64_t log_softmax_bytes = 0;  // batch x (seq - 1) x vocab x loss dtype
  std::int64_t total() const {
    return output_bytes + shift_copy_bytes + upcast_bytes + log_softmax_bytes;
  }
};
EvalLossChain eval_loss_chain(std::int64_t batch, std::int64_t seq, std::int64_t vocab,
                              int out_bytes, bool loss_upcast);

// One step of the Hugging Face Trainer's evaluation loop without compute_metrics (transformers
// v5.24.0 trainer.py:2876 evaluate() passes prediction_loss_only=True; :2996 evaluation_loop ->
// :3193-3299 prediction_step): under no_grad, `loss, outputs = compute_loss(model, inputs,
// return_outputs=True)` (:3275), so the model output lives until prediction_step returns. In the
// forward (models/llama/modeling_llama.py:469-475) `hidden_states = outputs.last_hidden_state`
// stays referenced while `logits = self.lm_head(hidden_states)` and the loss run; ForCausalLMLoss
// (loss/loss_utils.py:51-73) upcasts with `logits = logits.float()` (:61), pads the labels rather
// than shifting the logits (:65), and cross_entropy makes log_softmax's fp32 output before
// nll_loss. Bytes of each tensor alive when log_softmax's output is made, for `batch` sequences
// of `seq` tokens at the eval micro-batch (per_device_eval_batch_size).
struct TrainerEvalLoss {
  std::int64_t hidden_bytes = 0;       // last_hidden_state: batch x seq x hidden x stream bytes
  std::int64_t output_bytes = 0;       // lm_head output: batch x seq x vocab x out_bytes
  std::int64_t shift_copy_bytes = 0;   // transformers < 4.49: the fp32 shifted contiguous copy
  std::int64_t upcast_bytes = 0;       // logits.float() when the model's logits are 16-bit
  std::int64_t log_softmax_bytes = 0;  // batch x seq x vocab x loss bytes
  std::int64_t total() const {
    return hidden_bytes + output_bytes + shift_copy_bytes + upcast_bytes + log_softmax_bytes;
  }
};
TrainerEvalLoss trainer_eval_loss(std::int64_t batch, std::int64_t seq, std::int64_t vocab,
                                  std::int64_t hidden, int stream_bytes, int out_bytes,
                                  bool loss_upcast, bool loss_shift_copy);

// The largest working set of one decoder layer in the no_grad evaluation forward (nothing is
// saved for backward, so each temporary dies when its last reference does):
//   both blocks, hidden wide in the stream dtype: the embedding output (`inputs_embeds`, held by
//   LlamaModel.forward, modeling_llama.py:390), the layer's input (the caller's loop variable,
//   :394; the same tensor in layer 0), the residual (:311) and the block's normed input (:312):
//   4 tensors from the second layer on;
//   MLP (modeling_llama.py:164 `down_proj(act_fn(gate_proj(x)) * up_proj(x))`), per element of
//   the MLP width: at the product, act_fn's output, up_proj's output and the product, 3 x compute
//   bytes (gate_proj's output dies when act_fn returns; a plain MLP holds fc_in's output and its
//   activation, 2). A LoRA adapter on the projection (PEFT 0.21.2 tuners/lora/layer.py:1088-1113
//   `result = result + lora_B(lora_A(dropout(x))) * scaling`) holds, next to the base output,
//   lora_B's output and its scaled copy in the adapter dtype: at up_proj, act_fn(gate) + base +
//   2 adapter tensors (2e + 2a); at gate_proj, base + 2a; and the input cast to the adapter dtype
//   (`_cast_input_dtype`, :1100; hidden wide) when that differs from the stream's;
//   eager attention (modeling_llama.py:193-197): at `softmax(w, dtype=float32).to(q.dtype)`, the
//   16-bit scores, their fp32 softmax and its 16-bit cast: 8 B per score of batch x heads x seq
//   x seq. q, k, v and SDPA's output (a few hidden widths) are below the MLP's widths.
struct EvalLayerShape {
  std::int64_t batch = 1;
  std::int64_t seq = 1;
  std::int64_t hidden = 0;
  std::int64_t mlp_width = 0;
  std::int64_t heads = 0;
  std::int64_t layers = 2;  // 1: the layer's input is the embedding output (3 stream tensors)
  bool gated_mlp = true;
  int stream_bytes = 2;
  int compute_bytes = 2;
  int adapter_bytes = 4;  // dtype of the LoRA branch's outputs (PEFT: fp32 adapters; under
                          // autocast the branch's matmuls return the compute dtype)
  bool adapter_input_cast = false;  // the input is cast to the adapters' dtype (:1100)
  bool up_adapted = false;          // LoRA on up_proj (a plain MLP's fc_in)
  bool gate_adapted = false;        // LoRA on gate_proj
  bool eager_scores = false;
};
struct EvalLayerTransient {
  std::int64_t stream_bytes = 0;         // 4 (or 3) x tokens x hidden x stream bytes
  std::int64_t adapter_input_bytes = 0;  // the normed input cast to the adapter dtype
  std::int64_t mlp_bytes = 0;            // tokens x width x the largest per-element sum above
  std::int64_t scores_bytes = 0;         // eager attention: 8 x batch x heads x seq x seq
  std::int64_t total() const {
    return stream_bytes + std::max(adapter_input_bytes + mlp_bytes, scores_bytes);
  }
};
// Hidden-wide stream tensors alive in a layer (see above): 4, or 3 in a one-layer model.
int eval_stream_tensors(const EvalLayerShape& shape);
// Bytes per element of the MLP width at the MLP's largest moment (see above).
int eval_mlp_bytes_per_element(const EvalLayerShape& shape);
EvalLayerTransient eval_layer_transient(const EvalLayerShape& shape);

// litgpt generate_example(): model.set_kv_cache(batch_size=1) with the training
// max_seq_length: per layer k and v of (1, heads, max_seq, head_size) in the model dtype, where
// heads is n_head (1 for multi-query attention) (litgpt model.py:323-344 build_kv_cache), plus
// the (max_seq x max_seq) bool mask cache (model.py:545-547 build_mask_cache).
struct GenerationCache {
  std::int64_t kv_bytes = 0;
  std::int64_t mask_bytes = 0;
  std::int64_t total() const { return kv_bytes + mask_bytes; }
};
GenerationCache generation_cache(std::int64_t layers, std::int64_t heads, std::int64_t kv_heads,
                                 std::int64_t head_dim, std::int64_t max_seq, int dtype_bytes);

// The tensors alive on the GPU at the worst moment of quantising one base weight of `elements`
// at load, on top of the weights already built (each a separate allocation):
//   lightning_bnb      the bf16 weight as built + its fp16 copy (quantize_4bit's input)
//                      (lightning fabric/plugins/precision/bitsandbytes.py:334-340);
//   torchao_unchunked  the bf16 weight + the scaled blocks (blocks / scales) + (value - nf4) and
//                      its .abs(), each (elements x 16) bf16 (torchao v0.1 nf4tensor.py:376-399,
//                      438-446);
//   torchao_chunked    the bf16 weight + the scaled blocks + the uint8 index tensor + the two
//                      (chunk x 16) bf16 distance tensors of one 1,048,576-element chunk, or the
//                      two nibble tensors that combine the indices, whichever is larger
//                      (torchao v0.2.0 nf4tensor.py CHUNK_SIZE, convert_to_norm_float_weight).
struct LoadTransient {
  std::int64_t weight_bytes = 0;    // the weight as it arrives on the GPU (bf16)
  std::int64_t copy_bytes = 0;      // fp16 copy (bnb) / scaled blocks (torchao)
  std::int64_t indices_bytes = 0;   // torchao chunked: uint8 indices of every element
  std::int64_t distance_bytes = 0;  // torchao: (n x 16) distances and their abs, 2 tensors
  std::int64_t total() const { return weight_bytes + copy_bytes + indices_bytes + distance_bytes; }
};
inline constexpr std::int64_t kTorchaoNf4ChunkElements = 1024 * 1024;  // torchao CHUNK_SIZE
LoadTransient load_transient(LoadQuantiser q, std::int64_t elements);

// Appends the run phases' lines (the load transient, the validation pass or the generation, the
// Trainer's evaluation).
void add_run_phases(const Context& ctx, Items& items);

}  // namespace trainmem::ledger

namespace trainmem {

// The phase of the run beyond the training step whose lines are live in `slot`, in words ("the
// validation pass between steps", "loading: quantising the base weights"), or "" when only the
// step's lines are (src/ledger/run_phases.cpp).
std::string_view run_phase_at(const Ledger& ledger, int slot);
// A line of the QLoRA load transient (allocated after the weights in the event stream).
bool is_load_transient(const LedgerItem& item);

}  // namespace trainmem

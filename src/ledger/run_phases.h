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
#pragma once

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

// Appends the run phases' lines (the load transient, the validation pass or the generation).
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

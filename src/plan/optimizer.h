// The optimizer table: one row per optimizer, saying what state it keeps per parameter tensor,
// in which dtype, what its step allocates, and where that comes from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// How a row's state is stored.
enum class StateStorage {
  param_dtype,     // zeros_like(param): the recipe's state dtype (torch optimizers)
  fp32,            // always fp32 (bitsandbytes 32-bit, Adafactor accumulators)
  blockwise_8bit,  // uint8 + fp32 absmax per 256 values; tensors < 4096 elements stay fp32
};

struct OptimizerRow {
  OptimizerKind kind;
  std::string_view name;
  // Full-size states per parameter (Adam: exp_avg and exp_avg_sq = 2; Lion, momentum = 1).
  int full_states;
  // Adafactor: the second moment of a matrix is a row and a column vector instead.
  bool factored_second_moment;
  // Adam-mini: the second moment is one value per block (head/neuron) instead of per element.
  bool blockwise_second_moment;
  // Muon: 2-D hidden matrices keep 1 state; embeddings, head and vectors fall back to AdamW (2).
  bool muon_split;
  StateStorage storage;
  bool paged;  // state held in CUDA unified (paged) memory: evicted to host under pressure
  std::string_view source;
};

const OptimizerRow& optimizer_row(OptimizerKind kind);
const std::vector<OptimizerRow>& optimizer_table();

// bitsandbytes blockwise 8-bit: block of 256 values per fp32 absmax, and tensors with fewer than
// 4096 elements keep 32-bit state (bitsandbytes/optim/optimizer.py, min_8bit_size=4096).
inline constexpr std::int64_t kBnbStateBlock = 256;
inline constexpr std::int64_t kBnbMin8bitSize = 4096;

// bitsandbytes paged optimizers page only the state of tensors of at least 1e5 elements; smaller
// ones get zeros_like in PyTorch's pool (bitsandbytes/optim/optimizer.py get_state_buffer:
// `p.numel() < 1e5`), and the 8-bit absmax blocks are always plain torch.zeros (init_state).
inline constexpr std::int64_t kBnbPagedMinElements = 100'000;

// What a tensor's state depends on besides its shape and the state dtype.
struct TensorUse {
  // Muon steps this tensor with AdamW (embeddings and the head, besides vectors).
  bool adamw_fallback = false;
  // Adam-mini: elements that share one second-moment value. Its q and k are viewed as blocks of
  // hidden² / heads elements (adam_mini.py head_numel, one per head when head_dim is hidden /
  // heads); 0: one value per row (embeddings, the head, v, o and the MLP).
  std::int64_t block_elements = 0;
  // Adam-mini steps biases with plain Adam (adam_block_names = {"bias"}): a full second moment.
  bool bias = false;
  // A bitsandbytes 8-bit row keeps this tensor's states in 32 bits (the HF Trainer's override for
  // nn.Embedding weights: FrameworkBehaviour::bnb_embeddings_32bit).
  bool states_32bit = false;
};

// The use of one tensor of the inventory: Muon's fallback by role; Adam-mini's head blocks for
// the base q and k projections (not their LoRA adapters); the 32-bit override of the embedding
// tables (nn.Embedding: token and learned position embeddings) when `embeddings_32bit`.
TensorUse tensor_use(const TensorGroup& group, const ModelSpec& spec, bool embeddings_32bit);

// State bytes the optimizer keeps for one tensor of `shape`, given the recipe's state dtype.
std::int64_t optimizer_state_bytes(const OptimizerRow& row, const std::vector<std::int64_t>& shape,
                                   Dtype state_dtype, TensorUse use = {});

// Bytes per element of a paged state buffer: uint8 for the 8-bit rows, fp32 for the 32-bit ones
// (bitsandbytes get_state_buffer is called with the state's own dtype).
std::int64_t paged_state_element_bytes(const OptimizerRow& row);

// The part of optimizer_state_bytes a paged row keeps in CUDA unified memory, outside PyTorch's
// pool: the state buffers of tensors of at least kBnbPagedMinElements elements (not their absmax
// blocks). 0 for rows that do not page.
std::int64_t paged_state_bytes(const OptimizerRow& row, const std::vector<std::int64_t>& shape,
                               TensorUse use = {});

// fp32 copies of a parameter Adafactor's step holds at once: 4 for a 16-bit parameter (its grad
// and itself upcast, the update and its negation), 2 for an fp32 one.
int adafactor_scratch_copies(Dtype param_dtype);

// Scratch the step allocates on top of the states, for tensors with `total_elements` elements
// whose largest single tensor has `largest_elements`, in `state_dtype`.
std::int64_t optimizer_step_scratch_bytes(const OptimizerRow& row, OptimizerImpl impl,
                                          std::int64_t total_elements,
                                          std::int64_t largest_elements, Dtype state_dtype);
// The arithmetic behind optimizer_step_scratch_bytes, as the ledger line prints it.
std::string optimizer_step_scratch_formula(const OptimizerRow& row, OptimizerImpl impl,
                                           std::int64_t total_elements,
                                           std::int64_t largest_elements, Dtype state_dtype);

}  // namespace trainmem

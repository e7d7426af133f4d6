#include "plan/optimizer.h"

#include <fmt/format.h>

#include "model/dtype.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

const std::vector<OptimizerRow> kTable = {
    {OptimizerKind::adamw, "adamw", 2, false, false, false, StateStorage::param_dtype, false,
     "torch/optim/adamw.py: exp_avg, exp_avg_sq = zeros_like(p), created at the first step"},
    {OptimizerKind::adamw_8bit, "adamw-8bit", 2, false, false, false, StateStorage::blockwise_8bit,
     false, "bitsandbytes/optim/optimizer.py Optimizer2State.init_state (optim_bits=8)"},
    {OptimizerKind::paged_adamw, "paged-adamw", 2, false, false, false, StateStorage::fp32, true,
     "bitsandbytes/optim/adamw.py PagedAdamW; functional.py get_paged (cudaMallocManaged)"},
    {OptimizerKind::paged_adamw_8bit, "paged-adamw-8bit", 2, false, false, false,
     StateStorage::blockwise_8bit, true, "bitsandbytes/optim/adamw.py PagedAdamW8bit"},
    {OptimizerKind::adafactor, "adafactor", 0, true, false, false, StateStorage::fp32, false,
     "transformers/optimization.py Adafactor (beta1=None: no first moment)"},
    {OptimizerKind::sgd, "sgd", 0, false, false, false, StateStorage::param_dtype, false,
     "torch/optim/sgd.py (momentum=0 keeps no buffer)"},
    {OptimizerKind::sgd_momentum, "sgd-momentum", 1, false, false, false, StateStorage::param_dtype,
     false, "torch/optim/sgd.py momentum_buffer = clone(grad)"},
    {OptimizerKind::lion, "lion", 1, false, false, false, StateStorage::param_dtype, false,
     "Chen et al. 2023, arXiv:2302.06675 (one exp_avg state)"},
    {OptimizerKind::lion_8bit, "lion-8bit", 1, false, false, false, StateStorage::blockwise_8bit,
     false, "bitsandbytes/optim/lion.py Lion8bit (Optimizer1State, optim_bits=8)"},
    {OptimizerKind::adam_mini, "adam-mini", 1, false, true, false, StateStorage::param_dtype, false,
     "Zhang et al. 2024, arXiv:2406.16793 (m per element, v per block)"},
    {OptimizerKind::muon, "muon", 1, false, false, true, StateStorage::param_dtype, false,
     "Jordan et al. 2024, Muon (momentum on 2-D hidden matrices; AdamW for the rest)"},
    {OptimizerKind::adamw_32bit, "adamw-32bit", 2, false, false, false, StateStorage::fp32, false,
     "bitsandbytes/optim/adamw.py AdamW (optim_bits=32) / AdamW32bit; optimizer.py "
     "Optimizer2State.init_state: fp32 state1, state2"},
    {OptimizerKind::lion_32bit, "lion-32bit", 1, false, false, false, StateStorage::fp32, false,
     "bitsandbytes/optim/lion.py Lion (optim_bits=32); optimizer.py Optimizer1State.init_state: "
     "one fp32 state1"},
    {OptimizerKind::paged_lion, "paged-lion", 1, false, false, false, StateStorage::fp32, true,
     "bitsandbytes/optim/lion.py PagedLion / PagedLion32bit; functional.py get_paged"},
    {OptimizerKind::paged_lion_8bit, "paged-lion-8bit", 1, false, false, false,
     StateStorage::blockwise_8bit, true, "bitsandbytes/optim/lion.py PagedLion8bit"},
    {OptimizerKind::rmsprop_32bit, "rmsprop-32bit", 1, false, false, false, StateStorage::fp32,
     false, "bitsandbytes/optim/rmsprop.py RMSprop (optim_bits=32), Optimizer1State"},
    {OptimizerKind::rmsprop_8bit, "rmsprop-8bit", 1, false, false, false,
     StateStorage::blockwise_8bit, false, "bitsandbytes/optim/rmsprop.py RMSprop8bit"},
    // AdEMAMix.init_state: state1 = _get_state_double_buffer (the fast and slow first moments,
    // (2, *p.shape)), state2 the second moment; 8-bit: absmax1 (2, blocks), absmax2 (blocks).
    {OptimizerKind::ademamix, "ademamix", 3, false, false, false, StateStorage::fp32, false,
     "bitsandbytes/optim/ademamix.py AdEMAMix.init_state (optim_bits=32)"},
    {OptimizerKind::ademamix_8bit, "ademamix-8bit", 3, false, false, false,
     StateStorage::blockwise_8bit, false, "bitsandbytes/optim/ademamix.py AdEMAMix8bit"},
    {OptimizerKind::paged_ademamix, "paged-ademamix", 3, false, false, false, StateStorage::fp32,
     true, "bitsandbytes/optim/ademamix.py PagedAdEMAMix; _get_state_double_buffer (get_paged)"},
    {OptimizerKind::paged_ademamix_8bit, "paged-ademamix-8bit", 3, false, false, false,
     StateStorage::blockwise_8bit, true, "bitsandbytes/optim/ademamix.py PagedAdEMAMix8bit"},
};

std::int64_t elements(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::int64_t blockwise_8bit_bytes(std::int64_t n) {
  if (n < kBnbMin8bitSize) return n * 4;
  return n + (n + kBnbStateBlock - 1) / kBnbStateBlock * 4;
}

// bitsandbytes init_state: an optim_bits 32 override makes an 8-bit row's states fp32, as its
// 32-bit rows keep them.
StateStorage storage_of(const OptimizerRow& row, TensorUse use) {
  return use.states_32bit && row.storage == StateStorage::blockwise_8bit ? StateStorage::fp32
                                                                         : row.storage;
}

std::int64_t one_state_bytes(StateStorage storage, std::int64_t n, Dtype state_dtype) {
  switch (storage) {
    case StateStorage::param_dtype:
      return dense_bytes(state_dtype, n);
    case StateStorage::fp32:
      return n * 4;
    case StateStorage::blockwise_8bit:
      return blockwise_8bit_bytes(n);
  }
  return 0;
}

std::int64_t paged_element_bytes(StateStorage storage) {
  return storage == StateStorage::blockwise_8bit ? dense_bytes(Dtype::u8, 1)
                                                 : dense_bytes(Dtype::f32, 1);
}

}  // namespace

const std::vector<OptimizerRow>& optimizer_table() {
  return kTable;
}

const OptimizerRow& optimizer_row(OptimizerKind kind) {
  for (const OptimizerRow& row : kTable) {
    if (row.kind == kind) return row;
  }
  return kTable.front();
}

TensorUse tensor_use(const TensorGroup& group, const ModelSpec& spec, bool embeddings_32bit) {
  TensorUse use;
  const bool table = group.role == Role::embedding || group.role == Role::position_embedding;
  use.adamw_fallback = table || group.role == Role::lm_head;
  use.states_32bit = embeddings_32bit && table && !group.is_bias;
  use.bias = group.is_bias;
  const bool base_qk = (group.role == Role::q || group.role == Role::k) &&
                       group.adapter == AdapterPart::none && !group.is_bias;
  if (base_qk && spec.heads > 0) use.block_elements = spec.hidden * spec.hidden / spec.heads;
  return use;
}

std::int64_t optimizer_state_bytes(const OptimizerRow& row, const std::vector<std::int64_t>& shape,
                                   Dtype state_dtype, TensorUse use) {
  const std::int64_t n = elements(shape);
  const bool matrix = shape.size() >= 2;
  if (row.muon_split && (!matrix || use.adamw_fallback))
    return 2 * one_state_bytes(row.storage, n, state_dtype);
  std::int64_t bytes = row.full_states * one_state_bytes(storage_of(row, use), n, state_dtype);
  if (row.factored_second_moment) {
    // Row and column accumulators for matrices, a full one for vectors (4 B each, fp32).
    // A zero-width matrix (safetensors allows shape [64, 0]) has no rows to accumulate: found by
    // estimate_fuzz as a division by zero.
    const std::int64_t rows = matrix && shape.back() > 0 ? n / shape.back() : 0;
    bytes += matrix ? (rows + shape.back()) * 4 : n * 4;
  }
  if (row.blockwise_second_moment && use.bias) {
    // adam_mini.py: a name with "bias" in it gets Adam's full v like the parameter.
    bytes += dense_bytes(state_dtype, n);
  } else if (row.blockwise_second_moment && matrix) {
    // adam_mini.py (v1.1.1) Adam_mini.step: vmean = zeros_like(m[.., 0:1]), in m's (the
    // parameter's) dtype, one value per row, or per head block for q and k. A vector's vmean is
    // a 0-dim tensor, not priced, as torch's `step` scalars are not.
    const std::int64_t blocks = use.block_elements > 0 && n % use.block_elements == 0
                                    ? n / use.block_elements
                                    : shape.front();
    bytes += dense_bytes(state_dtype, blocks);
  }
  return bytes;
}

std::int64_t paged_state_element_bytes(const OptimizerRow& row) {
  return paged_element_bytes(row.storage);
}

std::int64_t paged_state_bytes(const OptimizerRow& row, const std::vector<std::int64_t>& shape,
                               TensorUse use) {
  const std::int64_t n = elements(shape);
  if (!row.paged || n < kBnbPagedMinElements) return 0;
  // get_state_buffer pages state1/state2 themselves (every tensor this large is past
  // min_8bit_size, so an 8-bit row's are uint8, unless overridden to 32 bits).
  return row.full_states * paged_element_bytes(storage_of(row, use)) * n;
}

// transformers/optimization.py Adafactor.step (v5.24.0), per parameter, fp32 tensors of its size
// live at once: the update `(grad**2) + eps` is made while `grad**2` is, the factored update
// `torch.mul(r_factor, c_factor)` (or `exp_avg_sq.rsqrt()`) while that one is, and
// `p_data_fp32.add_(-update)` makes the negation beside the update: two. A 16-bit parameter adds
// its own fp32 copies, `grad = grad.float()` and `p_data_fp32 = p.float()`, kept to the end: four.
// Measured: Llama-3.1-8B in bf16, the optimizer tenant at the step's peak is 4 x 4 B x the
// 128,256 x 4,096 embedding plus the factored states (validation/data/measurements.jsonl).
int adafactor_scratch_copies(Dtype param_dtype) {
  return dtype_info(param_dtype).bits < 32 ? 4 : 2;
}

std::int64_t optimizer_step_scratch_bytes(const OptimizerRow& row, OptimizerImpl impl,
                                          std::int64_t total_elements,
                                          std::int64_t largest_elements, Dtype state_dtype) {
  if (row.kind == OptimizerKind::adamw) {
    // torch/optim/adamw.py _multi_tensor_adamw: torch._foreach_sqrt(exp_avg_sqs) materialises a
    // copy of v for the whole group; the fused kernel allocates nothing; the single-tensor loop
    // one tensor at a time.
    switch (impl) {
      case OptimizerImpl::foreach:
        return dense_bytes(state_dtype, total_elements);
      case OptimizerImpl::fused:
        return 0;
      case OptimizerImpl::for_loop:
        return dense_bytes(state_dtype, largest_elements);
    }
  }
  if (row.kind == OptimizerKind::muon) {
    // Newton-Schulz orthogonalisation of the largest matrix in bf16: X, X X^T, the polynomial and
    // the next X, about 4 bf16 copies (Jordan et al. 2024, muon.py zeropower_via_newtonschulz5).
    return 4 * 2 * largest_elements;
  }
  if (row.kind == OptimizerKind::adafactor)
    return adafactor_scratch_copies(state_dtype) * 4 * largest_elements;
  return 0;
}

std::string optimizer_step_scratch_formula(const OptimizerRow& row, OptimizerImpl impl,
                                           std::int64_t total_elements,
                                           std::int64_t largest_elements, Dtype state_dtype) {
  const auto bits = dtype_info(state_dtype).bits;
  const std::string per =
      bits % 8 == 0 ? fmt::format("{} B", bits / 8) : fmt::format("{} bits", bits);
  if (row.kind == OptimizerKind::adamw && impl == OptimizerImpl::foreach) {
    return fmt::format("foreach sqrt of every v: {} trainable params x {}",
                       with_commas(total_elements), per);
  }
  if (row.kind == OptimizerKind::adamw) {
    return fmt::format("one tensor at a time: largest tensor {} x {}",
                       with_commas(largest_elements), per);
  }
  if (row.kind == OptimizerKind::muon) {
    return fmt::format("Newton-Schulz on the largest matrix: 4 bf16 copies x {} x 2 B",
                       with_commas(largest_elements));
  }
  if (row.kind == OptimizerKind::adafactor) {
    const int copies = adafactor_scratch_copies(state_dtype);
    return fmt::format("{} fp32 copies of the largest tensor ({}): {} x {} x 4 B", copies,
                       copies == 4 ? "16-bit parameters, upcast" : "fp32 parameters", copies,
                       with_commas(largest_elements));
  }
  return "";
}

}  // namespace trainmem

// Parameter census for splitting a model over ranks: per decoder layer, how many parameters are
// split by tensor parallelism, replicated, or routed experts, for all and for trainable tensors;
// plus the parts outside the layers (embedding on the first stage, head and final norm on the
// last). Prefix sums make a pipeline stage's share O(1).
#pragma once

#include <cstdint>
#include <vector>

#include "trainmem/model.h"

namespace trainmem::layout {

// Parameter counts of one kind, split by how tensor/expert parallelism divides them.
struct Split {
  double tp_split = 0;    // column/row-parallel linears and the vocab-parallel embedding: / tp
  double replicated = 0;  // norms, router, biases of replicated modules: whole on every TP rank
  double experts = 0;     // routed experts: / (ep x etp), etp = tp (Megatron arguments.py:588)
  Split& operator+=(const Split& o) {
    tp_split += o.tp_split;
    replicated += o.replicated;
    experts += o.experts;
    return *this;
  }
  // Parameters in all, before any split.
  double params() const { return tp_split + replicated + experts; }
  // Parameters on one rank of a (tp, ep) layout.
  double on_rank(std::int64_t tp, std::int64_t ep) const {
    return tp_split / static_cast<double>(tp) + replicated + experts / static_cast<double>(ep * tp);
  }
};

struct Census {
  std::int64_t layers = 0;
  // Prefix sums over layers: prefix[i] = sum of layers [0, i). Size layers + 1.
  std::vector<Split> all_prefix, trainable_prefix;
  // Prefix sums of the parameters of the layers that hold a trainable parameter: an FSDP1 unit
  // flattens all of a layer's parameters into one FlatParameter, whose gradient covers the frozen
  // ones too (torch/distributed/fsdp/fully_sharded_data_parallel.py:210-213).
  std::vector<Split> trained_layers_prefix;
  Split embedding_all, embedding_trainable;  // token and position embeddings (first stage)
  Split head_all, head_trainable;            // lm_head and final norm (last stage)
  bool tied = false;                         // no separate lm_head tensor
  Split largest_layer;                       // the largest decoder layer (an FSDP/ZeRO-3 unit)
  Split most_trainable_layer;                // the trainable part of the layer with the most
  std::int64_t total_all = 0, total_trainable = 0;
  // Parameters in tensors of at most N elements, for ZeRO-3's persistence threshold: pairs of
  // (tensor elements, params), sorted by tensor elements.
  std::vector<std::pair<std::int64_t, std::int64_t>> tensor_sizes;
};

Census take_census(const ParameterInventory& inventory, const ModelSpec& spec);

// First and one-past-last layer of pipeline stage r of p (Megatron splits layers evenly; the
// remainder goes to the first stages).
std::pair<std::int64_t, std::int64_t> stage_layers(std::int64_t layers, std::int64_t p,
                                                   std::int64_t r);

struct StageParams {
  double all = 0;  // parameters on one rank of this stage
  double trainable = 0;
  double root = 0;  // outside the decoder layers (embedding, head, final norm) on this rank
  double embedding = 0, head = 0;  // of root: the input embedding and the lm_head on this rank
  // Parameters on this rank of the FSDP1 units that hold a trainable parameter (each decoder
  // layer, the root): what an FSDP1 FlatParameter's gradient covers.
  double in_trained_units = 0;
  std::int64_t layers = 0;
};
StageParams stage_params(const Census& c, std::int64_t tp, std::int64_t ep, std::int64_t pp,
                         std::int64_t stage);

// Params in tensors with at most `threshold` elements (ZeRO-3 keeps these whole).
std::int64_t small_tensor_params(const Census& c, std::int64_t threshold);

}  // namespace trainmem::layout

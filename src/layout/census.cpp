#include "layout/census.h"

#include <algorithm>

#include "model/inventory.h"

namespace trainmem::layout {
namespace {

// Megatron's split of a transformer layer (megatron/core/tensor_parallel/layers.py
// ColumnParallelLinear / RowParallelLinear; VocabParallelEmbedding): every projection matrix and
// its bias along the split dimension is divided by tp; norms and the MoE router are replicated.
bool tp_splits(const TensorGroup& g) {
  switch (g.role) {
    case Role::embedding:
    case Role::lm_head:
    case Role::q:
    case Role::k:
    case Role::v:
    case Role::o:
    case Role::qkv:
    case Role::q_b:
    case Role::kv_b:
    case Role::gate:
    case Role::up:
    case Role::gate_up:
    case Role::down:
      return true;
    case Role::position_embedding:
    case Role::q_a:
    case Role::kv_a:
    case Role::q_norm:
    case Role::k_norm:
    case Role::latent_norm:
    case Role::attention_sinks:
    case Role::router:
    case Role::router_bias:
    case Role::shared_expert_gate:
    case Role::layer_norm:
    case Role::final_norm:
      return false;
  }
  return false;
}

void add_to(Split& s, const TensorGroup& g, double params) {
  if (g.expert == ExpertKind::routed) {
    s.experts += params;
  } else if (tp_splits(g)) {
    s.tp_split += params;
  } else {
    s.replicated += params;
  }
}

}  // namespace

Census take_census(const ParameterInventory& inventory, const ModelSpec& spec) {
  Census c;
  c.layers = spec.layers;
  std::vector<Split> all(static_cast<std::size_t>(spec.layers)),
      trainable(static_cast<std::size_t>(spec.layers));
  bool has_head = false;
  for (const TensorGroup& g : inventory.groups) {
    if (g.mtp) continue;
    const std::int64_t n = group_params(g);
    c.total_all += n;
    if (g.trainable) c.total_trainable += n;
    c.tensor_sizes.emplace_back(tensor_elements(g), n);
    if (g.role == Role::lm_head) has_head = true;
    if (g.layer_first >= 0 && g.layer_last >= g.layer_first && g.layer_last < spec.layers) {
      const double per_layer =
          static_cast<double>(n) / static_cast<double>(g.layer_last - g.layer_first + 1);
      for (std::int64_t l = g.layer_first; l <= g.layer_last; ++l) {
        add_to(all[static_cast<std::size_t>(l)], g, per_layer);
        if (g.trainable) add_to(trainable[static_cast<std::size_t>(l)], g, per_layer);
      }
      continue;
    }
    const bool head = g.role == Role::lm_head || g.role == Role::final_norm;
    add_to(head ? c.head_all : c.embedding_all, g, static_cast<double>(n));
    if (g.trainable)
      add_to(head ? c.head_trainable : c.embedding_trainable, g, static_cast<double>(n));
  }
  c.tied = !has_head;
  c.all_prefix.assign(static_cast<std::size_t>(spec.layers) + 1, Split{});
  c.trainable_prefix.assign(static_cast<std::size_t>(spec.layers) + 1, Split{});
  c.trained_layers_prefix.assign(static_cast<std::size_t>(spec.layers) + 1, Split{});
  for (std::size_t l = 0; l < all.size(); ++l) {
    c.trained_layers_prefix[l + 1] = c.trained_layers_prefix[l];
    if (trainable[l].params() > 0) c.trained_layers_prefix[l + 1] += all[l];
    c.all_prefix[l + 1] = c.all_prefix[l];
    c.all_prefix[l + 1] += all[l];
    c.trainable_prefix[l + 1] = c.trainable_prefix[l];
    c.trainable_prefix[l + 1] += trainable[l];
    if (all[l].params() > c.largest_layer.params()) c.largest_layer = all[l];
    if (trainable[l].params() > c.most_trainable_layer.params()) {
      c.most_trainable_layer = trainable[l];
    }
  }
  std::sort(c.tensor_sizes.begin(), c.tensor_sizes.end());
  return c;
}

std::pair<std::int64_t, std::int64_t> stage_layers(std::int64_t layers, std::int64_t p,
                                                   std::int64_t r) {
  const std::int64_t base = layers / p, extra = layers % p;
  const std::int64_t first = r * base + std::min(r, extra);
  return {first, first + base + (r < extra ? 1 : 0)};
}

namespace {
Split minus(const Split& a, const Split& b) {
  return {a.tp_split - b.tp_split, a.replicated - b.replicated, a.experts - b.experts};
}
}  // namespace

StageParams stage_params(const Census& c, std::int64_t tp, std::int64_t ep, std::int64_t pp,
                         std::int64_t stage) {
  const auto [first, last] = stage_layers(c.layers, pp, stage);
  const auto f = static_cast<std::size_t>(first), e = static_cast<std::size_t>(last);
  StageParams out;
  out.layers = last - first;
  out.all = minus(c.all_prefix[e], c.all_prefix[f]).on_rank(tp, ep);
  out.trainable = minus(c.trainable_prefix[e], c.trainable_prefix[f]).on_rank(tp, ep);
  // Stage 0 holds the embedding; the last stage the head and final norm. With tied embeddings
  // and pp > 1 the last stage keeps a second copy of the word embedding, synchronised by an
  // all-reduce (megatron/core/models/common/language_module/language_module.py,
  // setup_embeddings_and_output_layer).
  if (stage == 0) {
    out.embedding = c.embedding_all.on_rank(tp, ep);
    out.root += out.embedding;
    out.trainable += c.embedding_trainable.on_rank(tp, ep);
  }
  if (stage == pp - 1) {
    // The lm_head is split by tensor parallelism; the final norm beside it is replicated.
    out.head = c.head_all.tp_split / static_cast<double>(tp);
    out.root += c.head_all.on_rank(tp, ep);
    out.trainable += c.head_trainable.on_rank(tp, ep);
    if (c.tied && pp > 1) {
      out.root += c.embedding_all.tp_split / static_cast<double>(tp);
      out.trainable += c.embedding_trainable.tp_split / static_cast<double>(tp);
    }
  }
  out.all += out.root;
  out.in_trained_units =
      minus(c.trained_layers_prefix[e], c.trained_layers_prefix[f]).on_rank(tp, ep);
  const double root_trainable =
      out.trainable - minus(c.trainable_prefix[e], c.trainable_prefix[f]).on_rank(tp, ep);
  if (root_trainable > 0) out.in_trained_units += out.root;
  return out;
}

std::int64_t small_tensor_params(const Census& c, std::int64_t threshold) {
  std::int64_t n = 0;
  for (const auto& [elements, params] : c.tensor_sizes) {
    if (elements > threshold) break;
    n += params;
  }
  return n;
}

}  // namespace trainmem::layout

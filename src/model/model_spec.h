// Questions about a ModelSpec's layers and head widths, asked by the inventory, the activation
// model and the limits (src/model/model_spec.cpp).
#pragma once

#include <cstdint>

#include "trainmem/model.h"

namespace trainmem {

// True when layer `layer` (0-based) has a mixture-of-experts MLP.
bool is_moe_layer(const ModelSpec& spec, std::int64_t layer);

// True when layer `layer` attends through a sliding window.
bool is_sliding_layer(const ModelSpec& spec, std::int64_t layer);

// Number of MoE layers among spec.layers.
std::int64_t moe_layer_count(const ModelSpec& spec);

// Query/key width per head in attention scores (MLA: nope + rope).
std::int64_t qk_head_dim(const ModelSpec& spec);

// Value width per head (MLA: v_head_dim).
std::int64_t v_head_dim(const ModelSpec& spec);

}  // namespace trainmem

#include "model/model_spec.h"

#include "trainmem/model.h"

namespace trainmem {

// Qwen2-MoE/Qwen3-MoE decide per layer with (layer + 1) % decoder_sparse_step == 0
// (modeling_qwen3_moe.py, Qwen3MoeDecoderLayer.__init__); DeepSeek-V3 keeps the first
// first_k_dense_replace layers dense (modeling_deepseek_v3.py, DeepseekV3DecoderLayer).
bool is_moe_layer(const ModelSpec& spec, std::int64_t layer) {
  if (spec.moe.experts == 0) return false;
  if (layer < spec.moe.first_dense_layers) return false;
  const std::int64_t step = spec.moe.layer_step > 0 ? spec.moe.layer_step : 1;
  return (layer + 1) % step == 0;
}

bool is_sliding_layer(const ModelSpec& spec, std::int64_t layer) {
  if (spec.sliding_window <= 0) return false;
  if (spec.sliding_layers.empty()) return true;
  const auto i = static_cast<std::size_t>(layer);
  return i < spec.sliding_layers.size() && spec.sliding_layers[i];
}

std::int64_t moe_layer_count(const ModelSpec& spec) {
  std::int64_t count = 0;
  for (std::int64_t layer = 0; layer < spec.layers; ++layer) count += is_moe_layer(spec, layer);
  return count;
}

std::int64_t qk_head_dim(const ModelSpec& spec) {
  return spec.mla ? spec.mla_spec.qk_nope_head_dim + spec.mla_spec.qk_rope_head_dim : spec.head_dim;
}

std::int64_t v_head_dim(const ModelSpec& spec) {
  return spec.mla ? spec.mla_spec.v_head_dim : spec.head_dim;
}

}  // namespace trainmem

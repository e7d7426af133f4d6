// cohere2 (Command-R7B, Command-A): Cohere's parallel block (one shared CohereLayerNorm, gated
// SiLU MLP, tied embeddings, logits * logit_scale) with sliding-window attention on three layers
// of every four (transformers models/cohere2/modeling_cohere2.py, configuration_cohere2.py:
// sliding_window 4096, and layer_types from sliding_window_pattern, 4, when absent). RoPE runs
// on the sliding layers only, which saves no tensor either way.
#include "model/adapters/adapters.h"

namespace trainmem::adapters {
namespace {

// Cohere2Config's defaults for the window (configuration_cohere2.py).
constexpr std::int64_t kDefaultWindow = 4096;
constexpr std::int64_t kDefaultPattern = 4;

}  // namespace

void read_cohere2(ConfigReader& r, ModelSpec& s) {
  read_cohere(r, s);
  read_window_defaults(r, s, kDefaultWindow, kDefaultPattern);
}

}  // namespace trainmem::adapters

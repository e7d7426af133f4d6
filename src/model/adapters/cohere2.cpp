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
  // read_common reads a window only where the file names one; an explicit null means none.
  if (!r.has("sliding_window") && !r.is_null("sliding_window")) s.sliding_window = kDefaultWindow;
  if (s.sliding_layers.empty() && s.sliding_window > 0) {
    const std::int64_t pattern =
        r.has("sliding_window_pattern") ? r.count("sliding_window_pattern") : kDefaultPattern;
    s.sliding_layers = sliding_layers_from_pattern(s.layers, pattern);
  }
}

}  // namespace trainmem::adapters

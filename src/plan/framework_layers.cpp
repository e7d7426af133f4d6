#include "plan/framework_layers.h"

namespace trainmem {

ModelSpec framework_layers(ModelSpec spec, const FrameworkBehaviour& behaviour) {
  if (!behaviour.model_dropout) {
    spec.attention_dropout = 0.0;
    spec.hidden_dropout = 0.0;
    spec.embedding_dropout = 0.0;
  }
  // gelu_new and gelu_fast are the tanh approximation written out in Python (transformers
  // activations.py NewGELUActivation, FastGELUActivation); torch's fused
  // gelu(approximate="tanh") computes the same function and saves only its input.
  if (behaviour.fused_gelu &&
      (spec.activation == Activation::gelu_new || spec.activation == Activation::gelu_fast)) {
    spec.activation = Activation::gelu_tanh;
  }
  if (behaviour.rms_norm_fp32_weight && spec.norm == NormKind::rms_norm) {
    spec.norm = NormKind::rms_norm_fp32;
  }
  return spec;
}

}  // namespace trainmem

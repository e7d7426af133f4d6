// The decoder layers as the framework's own model code builds them (FrameworkBehaviour's
// model_dropout, fused_gelu and rms_norm_fp32_weight): a framework that runs its own model classes
// (litgpt's GPT) reads the same config.json shapes as transformers but composes the layer
// differently, and the activation model prices the layer it composes.
#pragma once

#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

// The spec with the framework's layer code applied: no dropout where its classes have none, the
// fused GELU where its MLP calls torch.nn.functional.gelu, the fp32 weight multiply where its
// RMSNorm upcasts the weight. A profile that runs transformers' classes leaves the spec as it is.
ModelSpec framework_layers(ModelSpec spec, const FrameworkBehaviour& behaviour);

}  // namespace trainmem

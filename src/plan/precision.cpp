#include "plan/precision.h"

#include <array>

namespace trainmem {
namespace {

// Sources: NVIDIA mixed-precision guidance ("maintain a primary copy of weights in FP32") and
// DeepSpeed's bf16 optimizer (runtime/bf16_optimizer.py) for the *-mixed rows; torch/optim/adamw.py
// (states created with torch.zeros_like(param), so in the parameter's dtype) for bf16 and fp32;
// torch.autocast (fp32 parameters, bf16 matmul outputs) for autocast-bf16, as HF Trainer does with
// bf16=True on an fp32-loaded model.
constexpr std::array<PrecisionRecipe, 5> kRecipes{{
    {Precision::bf16_mixed, Dtype::bf16, Dtype::bf16, Dtype::f32, Dtype::f32, Dtype::bf16,
     "NVIDIA mixed-precision training guide; deepspeed/runtime/bf16_optimizer.py"},
    {Precision::bf16, Dtype::bf16, Dtype::bf16, std::nullopt, Dtype::bf16, Dtype::bf16,
     "torch/optim/adamw.py: state = torch.zeros_like(p) keeps p.dtype"},
    {Precision::fp16_mixed, Dtype::f16, Dtype::f16, Dtype::f32, Dtype::f32, Dtype::f16,
     "NVIDIA mixed-precision training guide (fp16 with loss scaling)"},
    {Precision::fp32, Dtype::f32, Dtype::f32, std::nullopt, Dtype::f32, Dtype::f32,
     "torch/optim/adamw.py"},
    {Precision::autocast_bf16, Dtype::f32, Dtype::f32, std::nullopt, Dtype::f32, Dtype::bf16,
     "torch/amp/autocast_mode.py; transformers Trainer with bf16=True on an fp32 model"},
}};

}  // namespace

const PrecisionRecipe& recipe(Precision precision) {
  for (const PrecisionRecipe& r : kRecipes) {
    if (r.precision == precision) return r;
  }
  return kRecipes[0];
}

}  // namespace trainmem

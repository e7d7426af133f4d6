// Precision recipes: which dtype each copy of a parameter is held in. One row per recipe.
#pragma once

#include <optional>
#include <string_view>

#include "trainmem/model.h"
#include "trainmem/plan.h"

namespace trainmem {

struct PrecisionRecipe {
  Precision precision;
  Dtype weights;                // the copy forward and backward read
  Dtype gradients;              // .grad of a trainable parameter
  std::optional<Dtype> master;  // a separate fp32 master copy the optimizer updates, if any
  Dtype states;                 // optimizer state dtype when the optimizer keeps the param dtype
  Dtype compute;                // dtype of matmul outputs, hence of most saved activations
  std::string_view source;
};

const PrecisionRecipe& recipe(Precision precision);

}  // namespace trainmem

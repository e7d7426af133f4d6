// apply_method(): the inventory as a fine-tuning method leaves it. Full fine-tune trains
// everything; LoRA/QLoRA freeze the base and append adapter tensors; freeze trains a chosen subset.
// Everything is loaded in the precision recipe's weight dtype (from_pretrained(torch_dtype=...)).
#include <fmt/format.h>

#include "trainmem/estimate.h"
#include "trainmem/precision.h"

namespace trainmem {
namespace {

void set_all(ParameterInventory& inv, bool trainable, Dtype dtype) {
  for (TensorGroup& g : inv.groups) {
    g.trainable = trainable && !g.mtp;
    g.dtype = dtype;
  }
}

}  // namespace

ParameterInventory apply_method(const LoadedModel& model, const TrainingPlan& plan) {
  ParameterInventory inv = model.inventory;
  const Dtype weights = recipe(plan.precision).weights;
  switch (plan.method) {
    case Method::full:
      set_all(inv, true, weights);
      break;
    case Method::lora:
    case Method::qlora:
    case Method::freeze:
      set_all(inv, false, weights);
      break;
  }
  return inv;
}

}  // namespace trainmem

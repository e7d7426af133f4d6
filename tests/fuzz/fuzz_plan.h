// The plan's kinds (method, precision, optimizer and its implementation, checkpointing,
// attention, loss) from fuzzed bytes, in the order every plan-building target reads them.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include "trainmem/plan.h"

namespace trainmem::fuzz {

inline void consume_plan_kinds(FuzzedDataProvider& in, TrainingPlan& p) {
  p.method = static_cast<Method>(in.ConsumeIntegralInRange<int>(0, 3));
  if (p.method == Method::freeze) p.freeze.train_modules = {"q", "norm"};
  p.precision = static_cast<Precision>(in.ConsumeIntegralInRange<int>(0, 4));
  p.optimizer = static_cast<OptimizerKind>(in.ConsumeIntegralInRange<int>(0, 9));
  p.optimizer_impl = static_cast<OptimizerImpl>(in.ConsumeIntegralInRange<int>(0, 2));
  p.checkpointing = static_cast<Checkpointing>(in.ConsumeIntegralInRange<int>(0, 2));
  p.attention = static_cast<Attention>(in.ConsumeIntegralInRange<int>(0, 2));
  p.loss = static_cast<Loss>(in.ConsumeIntegralInRange<int>(0, 2));
}

}  // namespace trainmem::fuzz

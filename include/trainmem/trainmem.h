// trainmem's public API, in one include. One header per concept a caller uses:
//
//   model.h        load_model(): a preset, config.json, safetensors folder, HF cache entry or the
//                  same files' contents -> LoadedModel (ModelSpec, ParameterInventory, Dtype)
//   plan.h         TrainingPlan (and its Layout over GPUs) + validate(); the vocabulary of every
//                  setting; plans from text settings (PlanPatch); framework profiles; plan x model
//                  checks and size limits
//   import.h       what users already have: other tools' configs (--from) and their dataset
//   estimate.h     estimate(model, plan) -> Ledger: every byte as a line with its formula; and
//                  gpu_estimate(): the step replayed through PyTorch's caching allocator plus the
//                  CUDA context (peak allocated, peak reserved, device total)
//   device.h       the device database, fit() and judge(): the verdict against a card
//   solve.h        solve(), sweep(), advise(): the largest batch or sequence, the smallest GPU,
//                  fixes; the seed-001 per-tier table
//   render.h       text, JSON and SVG renderings of the above, and units for sizes
//   distributed.h  beyond one GPU: per-rank and per-host ledgers, layout search, configs that
//                  run the plan
//   validate.h     measured peaks and the estimator's error against them
//   errors.h       Error and Result<T>: failures are values
//
// Every function is pure: values in, values out; only load_model() and the readers of files a
// user names (configs, datasets, devices, measurements) read files, and nothing prints.
#pragma once

#include <string_view>

#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/errors.h"
#include "trainmem/estimate.h"
#include "trainmem/import.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"
#include "trainmem/validate.h"

namespace trainmem {

// The library's version; CMakeLists.txt and the Python package read it from this line.
inline constexpr std::string_view kVersion = "0.2.0";

}  // namespace trainmem

// trainmem's public API, in one include. The pipeline, one header per stage:
//
//   model.h     load_model(): a preset, config.json, safetensors folder or HF cache entry ->
//               LoadedModel (model_spec.h, inventory.h, dtype.h describe it); model_files.h:
//               the same from file contents (the web page's dropped folder)
//   plan.h      TrainingPlan: method, precision, optimizer, batch, sequence, ... + validate()
//   framework.h framework profiles (--framework): differences from hf applied to the plan
//   estimate.h  estimate(model, plan) -> Ledger (ledger.h): every byte as a line with its formula
//   device.h    the device database and fit(): the verdict against a card
//   gpu.h       gpu_estimate(): the step replayed through PyTorch's caching allocator, plus the
//               CUDA context: peak allocated, peak reserved, device total (nvidia-smi)
//   solve.h     solve(), sweep(), advise(): the largest batch or sequence, the smallest GPU, fixes
//   render.h    text, JSON and SVG renderings of the above (units.h formats sizes)
//   validate.h  measured peaks and the estimator's error against them
//   errors.h    Error and Result<T>: failures are values
//   layout.h, distributed.h, layout_search.h, emit.h, render_distributed.h: beyond one GPU
//               (per-rank and per-host ledgers, layout search, configs that run the plan)
//
// Every function is pure: values in, values out; only load_model() and read_measurements() read
// files, and nothing prints.
#pragma once

#include <string_view>

#include "trainmem/device.h"
#include "trainmem/distributed.h"
#include "trainmem/emit.h"
#include "trainmem/errors.h"
#include "trainmem/estimate.h"
#include "trainmem/framework.h"
#include "trainmem/gpu.h"
#include "trainmem/layout.h"
#include "trainmem/layout_search.h"
#include "trainmem/ledger.h"
#include "trainmem/limits.h"
#include "trainmem/model.h"
#include "trainmem/model_files.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"
#include "trainmem/render_distributed.h"
#include "trainmem/solve.h"
#include "trainmem/table.h"
#include "trainmem/units.h"
#include "trainmem/validate.h"

namespace trainmem {

// The library's version; CMakeLists.txt and the Python package read it from this line.
inline constexpr std::string_view kVersion = "0.2.0";

}  // namespace trainmem

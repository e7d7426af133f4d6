// JSON builders for documents that embed a ledger or a fit (estimate, solve, advise, sweep).
#pragma once

#include <nlohmann/json.hpp>

#include "trainmem/device.h"
#include "trainmem/estimate.h"

namespace trainmem {

struct GpuEstimate;  // gpu.h

// `gpu`: when given (and available), the document gains the "gpu" object (docs/gpu.md).
nlohmann::json ledger_json(const Ledger& ledger, const Fit* fit, const GpuEstimate* gpu = nullptr);
nlohmann::json gpu_json(const GpuEstimate& gpu);
nlohmann::json fit_json(const Fit& fit);
nlohmann::json plan_json(const TrainingPlan& plan);
// Every Layout field, nested knobs included (the plan's "layout" and the distributed document).
nlohmann::json layout_json(const Layout& layout);
nlohmann::json device_json(const Device& device);

}  // namespace trainmem

// JSON builders for documents that embed a ledger or a fit (estimate, solve, advise, sweep).
#pragma once

#include <nlohmann/json.hpp>

#include "trainmem/device.h"
#include "trainmem/ledger.h"

namespace trainmem {

nlohmann::json ledger_json(const Ledger& ledger, const Fit* fit);
nlohmann::json fit_json(const Fit& fit);

}  // namespace trainmem

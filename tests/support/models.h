// Models the tests price: presets, and the small configs the validation harness measured.
#pragma once

#include <string>

#include "trainmem/model.h"

namespace trainmem::testing_support {

// A preset or a path; fails the current test (and returns an empty model) when it cannot load.
LoadedModel load_or_fail(const std::string& ref);

// validation/configs/NAME.json, e.g. "qwen3-tiny".
LoadedModel validation_model(const std::string& name);

}  // namespace trainmem::testing_support

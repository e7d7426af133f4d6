// The dataset report (src/render/dataset.cpp).
#pragma once

#include <string>

#include "trainmem/render.h"

namespace trainmem {

std::string render_dataset_json(const DatasetFit& d);

}  // namespace trainmem

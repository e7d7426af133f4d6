// One row of a device file, checked: the schema of data/devices/*.json, which user device files
// (--devices FILE, TRAINMEM_DEVICES) share. docs/formats.md, "Device files".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "trainmem/device.h"
#include "trainmem/errors.h"

namespace trainmem::io {

// `field` is the row's JSON path ("devices[3]"), so a message names the row and the key.
Result<Device> device_from_json(const nlohmann::json& row, const std::string& file,
                                const std::string& field);

// Lower case, with spaces and underscores read as '-': how ids, aliases and typed names compare.
std::string normalise_device_name(std::string_view s);

}  // namespace trainmem::io

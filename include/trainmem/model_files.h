// A model given as file contents instead of paths: what the web page reads from a dropped folder
// with File.slice (config.json, the shard index, and each safetensors file's 8-byte length and
// JSON header, never the tensor data). The same parsing and mapping as load_model() on a folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/model.h"

namespace trainmem {

// The start of one safetensors file: `prefix` holds the 8-byte little-endian header length and
// the header JSON after it (more bytes are ignored); `size_bytes` is the whole file's size.
struct HeaderPrefix {
  std::string name;  // file name inside the folder, e.g. "model-00001-of-00004.safetensors"
  std::int64_t size_bytes = 0;
  std::string prefix;
};

struct ModelFiles {
  std::string folder;                     // the folder's name, for the model name and errors
  std::string config_text;                // config.json
  std::optional<std::string> index_text;  // model.safetensors.index.json, when present
  std::vector<HeaderPrefix> safetensors;  // every *.safetensors file in the folder
};

// Picks the files as load_model() does for a folder (the index's shards, else model*.safetensors,
// else every *.safetensors), parses their headers and maps the tensors. With no safetensors
// files, the model comes from config.json alone.
Result<LoadedModel> load_model_files(const ModelFiles& files);

}  // namespace trainmem

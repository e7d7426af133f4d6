// Reading safetensors headers (never the tensor data) and turning the tensor list into a
// ParameterInventory. Format rules follow the reference implementation (huggingface/safetensors
// tensor.rs): an 8-byte little-endian u64 header length N, N bytes of JSON, then the data buffer,
// which the tensors' data_offsets must tile exactly. See docs/research ecosystem.md §1.5–1.6.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/model.h"

namespace trainmem::io {

// The reference implementation's MAX_HEADER_SIZE: a larger header length is rejected before any
// allocation.
inline constexpr std::int64_t kSafetensorsMaxHeaderBytes = 100'000'000;

struct SafetensorsTensor {
  std::string name;                 // the header key, e.g. "model.layers.0.self_attn.q_proj.weight"
  Dtype dtype = Dtype::bf16;        // our dtype with the same element size (see dtype_name)
  std::string dtype_name;           // the header spelling, e.g. "BF16", "U32", "F8_E4M3FNUZ"
  std::vector<std::int64_t> shape;  // as stored; [] is a scalar
  std::int64_t begin = 0,
               end = 0;  // data_offsets, bytes relative to the data buffer, end exclusive
  std::string file;      // the file the header came from
};

// Our dtype for a safetensors dtype name ("BF16", "F32", ...); none when unknown or unsupported.
std::optional<Dtype> safetensors_dtype(std::string_view name);

// Parses a header given the file's first bytes (`prefix`: the 8-byte length and at least the JSON
// that follows) and the total file size. `file` names the file in errors. Tensors come back sorted
// by data offset.
Result<std::vector<SafetensorsTensor>> parse_safetensors_header(std::string_view prefix,
                                                                std::int64_t file_size,
                                                                const std::string& file);

// Reads only the header bytes of one file (symlinks followed), never the tensor data.
Result<std::vector<SafetensorsTensor>> read_safetensors_file(const std::filesystem::path& file);

// A folder: model.safetensors.index.json (its weight_map names the shards; every shard must exist
// and hold the tensors mapped to it), else every model*.safetensors file, else every *.safetensors.
Result<std::vector<SafetensorsTensor>> read_safetensors_folder(const std::filesystem::path& dir);

// The inventory and what the mapping had to say about it.
struct TensorMapping {
  ParameterInventory inventory;
  std::vector<std::string>
      notes;  // skipped buffers, unknown names, tied duplicates (one line each)
  std::int64_t unknown_tensors = 0;  // tensors whose name matched no rule (kept, closest role)
  std::int64_t skipped_tensors = 0;  // non-parameter buffers left out (GPT-2 attn.bias, scales)
  // The highest layer index past config.json's layers (and MTP layers), -1 when none: the
  // headers and the config disagree.
  std::int64_t layer_past_config = -1;
  std::string layer_past_config_name;  // one tensor in that layer
  // The first of config.json's layers no header holds a tensor of, -1 when every layer has one:
  // a shard is missing, or the folder holds part of the model.
  std::int64_t layer_missing = -1;
};

// Maps Hugging Face tensor names to inventory groups. Tensors identical in (name pattern, role,
// expert kind, bias, shape, dtype, mtp) across layers and experts form one group whose
// multiplicity is their count and whose layer span covers them. Linear weights are [out, in]
// (GPT-2 Conv1D weights, stored [in, out], are transposed). DeepSeek layers with an index >=
// spec.layers are MTP. Unknown names are kept with the closest role and listed in `notes`.
TensorMapping map_tensors(const std::vector<SafetensorsTensor>& tensors, const ModelSpec& spec);
ParameterInventory inventory_from_tensors(const std::vector<SafetensorsTensor>& tensors,
                                          const ModelSpec& spec);

// Whether the headers hold the model config.json describes: no tensor in a layer past its layers,
// and a token embedding of its [vocab_size, hidden_size] (transformers refuses either as a "size
// mismatch"). `where` names the folder or module in the error.
std::optional<Error> check_headers_against_config(const std::vector<SafetensorsTensor>& tensors,
                                                  const TensorMapping& mapping,
                                                  const ModelSpec& spec, const std::string& where);
// A model folder: config.json (via spec_from_config_text) plus the inventory read from the
// safetensors headers. `kind` is SourceKind::safetensors or SourceKind::hf_cache.
Result<LoadedModel> load_safetensors_model(const std::filesystem::path& dir, SourceKind kind);

}  // namespace trainmem::io

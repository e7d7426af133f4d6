// safetensors header parsing and validation, and reading headers from files and folders.
// Everything here treats the file as untrusted: lengths are checked against the file size and the
// header limit before anything is allocated, and only the header bytes are ever read.
#include "io/safetensors.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "io/json_parse.h"
#include "io/read_file.h"
#include "util/json_text.h"

namespace trainmem::io {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Every dtype the format defines (safetensors tensor.rs), with its bit size and the trainmem dtype
// of the same element size. F6 has no trainmem equivalent yet.
struct StDtype {
  std::string_view name;
  int bits;
  std::optional<Dtype> dtype;
};
constexpr std::array<StDtype, 22> kStDtypes{{
    {"F64", 64, Dtype::f64},
    {"I64", 64, Dtype::i64},
    {"U64", 64, Dtype::i64},
    {"C64", 64, Dtype::i64},
    {"F32", 32, Dtype::f32},
    {"I32", 32, Dtype::i32},
    {"U32", 32, Dtype::i32},
    {"F16", 16, Dtype::f16},
    {"BF16", 16, Dtype::bf16},
    {"I16", 16, Dtype::i16},
    {"U16", 16, Dtype::i16},
    {"F8_E4M3", 8, Dtype::f8_e4m3},
    {"F8_E5M2", 8, Dtype::f8_e5m2},
    {"F8_E8M0", 8, Dtype::u8},
    {"F8_E4M3FNUZ", 8, Dtype::f8_e4m3},
    {"F8_E5M2FNUZ", 8, Dtype::f8_e5m2},
    {"I8", 8, Dtype::i8},
    {"U8", 8, Dtype::u8},
    {"BOOL", 8, Dtype::boolean},
    {"F6_E2M3", 6, std::nullopt},
    {"F6_E3M2", 6, std::nullopt},
    {"F4", 4, Dtype::fp4},
}};

const StDtype* find_st_dtype(std::string_view name);

}  // namespace

std::optional<Dtype> safetensors_dtype(std::string_view name) {
  const StDtype* d = find_st_dtype(name);
  return d == nullptr ? std::nullopt : d->dtype;
}

namespace {

const StDtype* find_st_dtype(std::string_view name) {
  for (const StDtype& d : kStDtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// A JSON integer in [0, INT64_MAX], or nullopt.
std::optional<std::int64_t> non_negative_int(const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < 0) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

std::string str(std::int64_t v) {
  return std::to_string(v);
}

Result<SafetensorsTensor> parse_entry(const std::string& name, const json& entry,
                                      const std::string& file) {
  auto fail = [&](const std::string& key, std::string reason) {
    return bad_input(file, key.empty() ? name : name + "." + key, std::move(reason));
  };
  if (!entry.is_object()) return fail("", "a tensor entry must be a JSON object");
  SafetensorsTensor t;
  t.name = name;
  t.file = file;

  const auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end()) return fail("dtype", "missing");
  if (!dtype_it->is_string()) return fail("dtype", "must be a string such as \"BF16\"");
  t.dtype_name = dtype_it->get<std::string>();
  const StDtype* st = find_st_dtype(t.dtype_name);
  if (st == nullptr) return fail("dtype", "unknown safetensors dtype \"" + t.dtype_name + "\"");
  if (!st->dtype) {
    return fail("dtype", "safetensors dtype " + t.dtype_name + " is not supported by trainmem yet");
  }
  t.dtype = *st->dtype;

  const auto shape_it = entry.find("shape");
  if (shape_it == entry.end()) return fail("shape", "missing");
  if (!shape_it->is_array()) return fail("shape", "must be an array of non-negative integers");
  std::int64_t elements = 1;
  for (const json& dim : *shape_it) {
    const auto d = non_negative_int(dim);
    if (!d)
      return fail("shape", "dimension " + json_excerpt(dim) + " is not a non-negative integer");
    t.shape.push_back(*d);
    if (__builtin_mul_overflow(elements, *d, &elements)) {
      return fail("shape", "the element count overflows 64 bits");
    }
  }
  std::int64_t bits = 0;
  if (__builtin_mul_overflow(elements, std::int64_t{st->bits}, &bits)) {
    return fail("shape", "the byte size overflows 64 bits");
  }
  if (bits % 8 != 0) {
    return fail("shape", str(elements) + " elements of " + t.dtype_name +
                             " do not fill a whole number of bytes");
  }

  const auto off_it = entry.find("data_offsets");
  if (off_it == entry.end()) return fail("data_offsets", "missing");
  if (!off_it->is_array() || off_it->size() != 2) {
    return fail("data_offsets", "must be an array [begin, end]");
  }
  const auto begin = non_negative_int((*off_it)[0]);
  const auto end = non_negative_int((*off_it)[1]);
  if (!begin || !end) return fail("data_offsets", "begin and end must be non-negative integers");
  if (*begin > *end) {
    return fail("data_offsets", "begin " + str(*begin) + " is after end " + str(*end));
  }
  t.begin = *begin;
  t.end = *end;
  if (t.end - t.begin != bits / 8) {
    return fail("data_offsets", "spans " + str(t.end - t.begin) + " bytes but shape x dtype is " +
                                    str(bits / 8) + " bytes");
  }
  return t;
}

Error metadata_error(const std::string& file, const std::string& reason) {
  return bad_input(file, "__metadata__", reason);
}

}  // namespace

Result<std::vector<SafetensorsTensor>> parse_safetensors_header(std::string_view prefix,
                                                                std::int64_t file_size,
                                                                const std::string& file) {
  if (file_size < 8 || prefix.size() < 8) {
    return bad_input(file, "",
                     "not a safetensors file: " + str(file_size) +
                         " bytes, shorter than the 8-byte header length");
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) {
    n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
  }
  if (n > static_cast<std::uint64_t>(kSafetensorsMaxHeaderBytes)) {
    return bad_input(file, "header length",
                     std::to_string(n) + " bytes is over the " + str(kSafetensorsMaxHeaderBytes) +
                         "-byte limit (not a safetensors file, or a corrupt one)");
  }
  const auto header_bytes = static_cast<std::int64_t>(n);
  if (header_bytes > file_size - 8) {
    return bad_input(file, "header length",
                     str(header_bytes) + " bytes runs past the end of the file (" + str(file_size) +
                         " bytes): truncated or not a safetensors file");
  }
  if (static_cast<std::int64_t>(prefix.size()) < 8 + header_bytes) {
    return bad_input(file, "header",
                     "only " + str(static_cast<std::int64_t>(prefix.size())) + " of its " +
                         str(8 + header_bytes) + " bytes were read");
  }
  const std::string_view text = prefix.substr(8, static_cast<std::size_t>(header_bytes));
  auto parsed = parse_json(text, file, "header");
  if (!parsed) return parsed.error();
  const json& root = parsed.value();
  if (!root.is_object()) {
    return bad_input(file, "header", "must be a JSON object, got " + std::string(root.type_name()));
  }

  const std::int64_t data_bytes = file_size - 8 - header_bytes;
  std::vector<SafetensorsTensor> tensors;
  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__") {
      if (value.is_null()) continue;
      if (!value.is_object()) return metadata_error(file, "must be an object of strings");
      for (const auto& [mkey, mvalue] : value.items()) {
        if (!mvalue.is_string()) {
          return bad_input(file, "__metadata__." + mkey, "metadata values must be strings");
        }
      }
      continue;
    }
    auto t = parse_entry(key, value, file);
    if (!t) return t.error();
    if (t->end > data_bytes) {
      return bad_input(
          file, key + ".data_offsets",
          "end " + str(t->end) + " is past the data section (" + str(data_bytes) + " bytes)");
    }
    tensors.push_back(std::move(t).value());
  }

  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.name < b.name;
  });
  std::int64_t covered = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor& t : tensors) {
    if (t.begin < covered) {
      return bad_input(file, t.name + ".data_offsets",
                       "[" + str(t.begin) + ", " + str(t.end) + ") overlaps " + previous->name +
                           " [" + str(previous->begin) + ", " + str(previous->end) + ")");
    }
    if (t.begin > covered) {
      return bad_input(file, t.name + ".data_offsets",
                       "gap of " + str(t.begin - covered) + " bytes before it (data from byte " +
                           str(covered) + " belongs to no tensor)");
    }
    covered = t.end;
    previous = &t;
  }
  if (covered != data_bytes) {
    return bad_input(file, "data_offsets",
                     "the tensors cover " + str(covered) + " bytes but the data section holds " +
                         str(data_bytes) + " (trailing bytes belong to no tensor)");
  }
  return tensors;
}

Result<std::vector<SafetensorsTensor>> read_safetensors_file(const fs::path& path) {
  const std::string file = path.string();
  std::error_code ec;
  if (auto kind = describe_non_file(path))
    return bad_input(file, "", "is " + *kind + ", not a file");
  if (!fs::is_regular_file(path, ec)) {
    return Error{ErrorCode::not_found, file, "", "no such file"};
  }
  const auto size = fs::file_size(path, ec);
  if (ec) return bad_input(file, "", "cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad_input(file, "", "cannot open for reading");
  const auto file_size = static_cast<std::int64_t>(std::min<std::uintmax_t>(
      size, static_cast<std::uintmax_t>(std::numeric_limits<std::int64_t>::max())));

  std::string prefix(static_cast<std::size_t>(std::min<std::int64_t>(8, file_size)), '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  if (!in) return bad_input(file, "", "cannot read the header length");
  if (prefix.size() == 8) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) {
      n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
    }
    // Only read the header once the length is known to be sane; otherwise the parser below
    // reports the problem from the 8 bytes alone.
    if (n <= static_cast<std::uint64_t>(kSafetensorsMaxHeaderBytes) &&
        static_cast<std::int64_t>(n) <= file_size - 8) {
      prefix.resize(8 + static_cast<std::size_t>(n));
      in.read(prefix.data() + 8, static_cast<std::streamsize>(n));
      if (!in) return bad_input(file, "header", "cannot read the header bytes");
    }
  }
  return parse_safetensors_header(prefix, file_size, file);
}

namespace {

// A shard name from an index must stay inside the folder.
bool safe_relative(const fs::path& p) {
  if (p.empty() || p.is_absolute() || p.has_root_name()) return false;
  for (const auto& part : p) {
    if (part == "..") return false;
  }
  return true;
}

Result<std::vector<SafetensorsTensor>> read_indexed(const fs::path& dir, const fs::path& index) {
  const std::string file = index.string();
  std::error_code ec;
  auto read = read_regular_file(index, kSafetensorsMaxHeaderBytes, "a safetensors index");
  if (!read) return read.error();
  const std::string& text = read.value();
  auto parsed = parse_json(text, file);
  if (!parsed) return parsed.error();
  const json& root = parsed.value();
  if (!root.is_object()) return bad_input(file, "", "must be a JSON object");
  const auto map_it = root.find("weight_map");
  if (map_it == root.end()) return bad_input(file, "weight_map", "missing");
  if (!map_it->is_object() || map_it->empty()) {
    return bad_input(file, "weight_map", "must be a non-empty object of tensor name -> shard file");
  }
  std::map<std::string, std::set<std::string>> shards;  // shard -> tensor names mapped to it
  for (const auto& [name, shard] : map_it->items()) {
    if (!shard.is_string() || !safe_relative(fs::path(shard.get<std::string>()))) {
      return bad_input(file, "weight_map." + name,
                       "must name a shard file inside the folder, got " + json_excerpt(shard));
    }
    shards[shard.get<std::string>()].insert(name);
  }
  std::vector<SafetensorsTensor> all;
  std::set<std::string> seen;
  for (const auto& [shard, names] : shards) {
    const fs::path path = dir / shard;
    if (!fs::exists(path, ec)) {
      return Error{ErrorCode::bad_input, file, "weight_map." + *names.begin(),
                   "names shard " + shard + ", which is not in " + dir.string()};
    }
    auto tensors = read_safetensors_file(path);
    if (!tensors) return tensors.error();
    std::set<std::string> present;
    for (auto& t : *tensors) {
      present.insert(t.name);
      if (!seen.insert(t.name).second) {
        return bad_input(path.string(), t.name, "tensor also stored in another shard");
      }
      all.push_back(std::move(t));
    }
    for (const std::string& name : names) {
      if (!present.count(name)) {
        return bad_input(file, "weight_map." + name, "shard " + shard + " does not hold it");
      }
    }
  }
  return all;
}

}  // namespace

Result<std::vector<SafetensorsTensor>> read_safetensors_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Error{ErrorCode::not_found, dir.string(), "", "not a folder"};
  }
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index, ec)) return read_indexed(dir, index);

  // No index: model*.safetensors when present (consolidated.safetensors and adapter files are
  // duplicates or extras), else every *.safetensors.
  std::vector<fs::path> model_files, all_files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".safetensors" || !entry.is_regular_file(ec)) continue;
    all_files.push_back(p);
    if (p.filename().string().rfind("model", 0) == 0) model_files.push_back(p);
  }
  if (ec) return bad_input(dir.string(), "", "cannot list: " + ec.message());
  std::vector<fs::path>& files = model_files.empty() ? all_files : model_files;
  if (files.empty()) {
    return Error{ErrorCode::not_found, dir.string(), "", "no *.safetensors files in the folder"};
  }
  std::sort(files.begin(), files.end());
  std::vector<SafetensorsTensor> all;
  std::set<std::string> seen;
  for (const fs::path& p : files) {
    auto tensors = read_safetensors_file(p);
    if (!tensors) return tensors.error();
    for (auto& t : *tensors) {
      if (!seen.insert(t.name).second) {
        return bad_input(p.string(), t.name, "tensor also stored in another file");
      }
      all.push_back(std::move(t));
    }
  }
  return all;
}

}  // namespace trainmem::io

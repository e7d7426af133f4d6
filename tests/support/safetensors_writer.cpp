#include "support/safetensors_writer.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>

namespace trainmem::testing {
namespace {

int dtype_bits(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64" || dtype == "C64") return 64;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 32;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 16;
  if (dtype == "F6_E2M3" || dtype == "F6_E3M2") return 6;
  if (dtype == "F4") return 4;
  return 8;
}

}  // namespace

std::int64_t st_tensor_bytes(const StEntry& entry) {
  std::int64_t n = 1;
  for (std::int64_t d : entry.shape) n *= d;
  return n * dtype_bits(entry.dtype) / 8;
}

std::string st_header_json(const std::vector<StEntry>& entries, std::int64_t* data_bytes) {
  std::string json = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::int64_t offset = 0;
  for (const StEntry& e : entries) {
    json += ",\"" + e.name + "\":{\"dtype\":\"" + e.dtype + "\",\"shape\":[";
    for (std::size_t i = 0; i < e.shape.size(); ++i) {
      json += (i ? "," : "") + std::to_string(e.shape[i]);
    }
    const std::int64_t end = offset + st_tensor_bytes(e);
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  json += "}";
  if (data_bytes != nullptr) *data_bytes = offset;
  return json;
}

std::string le_u64(std::uint64_t n) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

std::string st_file_bytes(std::string_view header_json, std::int64_t data_bytes) {
  std::string header(header_json);
  while (header.size() % 8 != 0) header += ' ';
  std::string out = le_u64(header.size()) + header;
  out.append(static_cast<std::size_t>(data_bytes), '\0');
  return out;
}

std::string st_file_bytes(const std::vector<StEntry>& entries) {
  std::int64_t data = 0;
  const std::string json = st_header_json(entries, &data);
  return st_file_bytes(json, data);
}

void write_bytes(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

TempDir::TempDir() {
  std::random_device rd;
  const auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    path_ = base / ("trainmem-test-" + std::to_string(rd()) + std::to_string(rd()));
    if (std::filesystem::create_directory(path_)) return;
  }
  throw std::runtime_error("cannot create a temporary folder");
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) {
    had_ = true;
    old_ = old;
  }
  if (value != nullptr) {
    ::setenv(name, value, 1);
  } else {
    ::unsetenv(name);
  }
}

ScopedEnv::~ScopedEnv() {
  if (had_) {
    ::setenv(name_.c_str(), old_.c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

}  // namespace trainmem::testing

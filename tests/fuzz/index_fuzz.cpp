// libFuzzer target for model.safetensors.index.json: the input is written as the index of a
// folder holding one tiny shard, then the folder is read. Either a one-line error or tensors.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/safetensors.h"

namespace {

std::filesystem::path folder() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("trainmem_index_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    // A valid shard: one BF16 tensor of 2 elements (4 bytes of data).
    const std::string header =
        R"({"model.norm.weight":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})";
    std::ofstream shard(d / "model-00001.safetensors", std::ios::binary);
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) shard.put(static_cast<char>((n >> (8 * i)) & 0xff));
    shard << header << std::string(4, '\0');
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto dir = folder();
  {
    std::ofstream index(dir / "model.safetensors.index.json", std::ios::binary | std::ios::trunc);
    index.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const auto result = trainmem::io::read_safetensors_folder(dir);
  if (!result.ok() && result.error().reason.empty()) __builtin_trap();
  if (result.ok()) {
    for (const auto& t : result.value()) {
      if (t.end < t.begin) __builtin_trap();
    }
  }
  return 0;
}

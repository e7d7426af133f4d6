#include "io/read_file.h"

#include <fmt/format.h>

#include <fstream>

namespace trainmem::io {

namespace fs = std::filesystem;

std::optional<std::string> describe_non_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  // A link that resolves to itself or to a cycle: the file exists as a name but has no target.
  if (ec == std::errc::too_many_symbolic_link_levels) return "a symbolic link loop";
  if (ec) return std::nullopt;
  switch (st.type()) {
    case fs::file_type::regular:
    case fs::file_type::not_found:
    case fs::file_type::none:
      return std::nullopt;
    case fs::file_type::directory:
      return "a folder";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::fifo:
      return "a named pipe";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::symlink:
    case fs::file_type::unknown:
      return "not a regular file";
  }
  return "not a regular file";
}

Result<std::string> read_regular_file(const fs::path& path, std::int64_t max_bytes,
                                      std::string_view what) {
  const std::string name = path.string();
  if (auto kind = describe_non_file(path)) {
    return bad_input(name, "", fmt::format("is {}, not a file", *kind));
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) return bad_input(name, "", "no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad_input(name, "", "cannot be opened");
  // Read at most max_bytes + 1 whatever the size claims: a file can grow while it is read.
  std::string text;
  constexpr std::size_t kChunk = 1 << 16;
  char buffer[kChunk];
  while (in && static_cast<std::int64_t>(text.size()) <= max_bytes) {
    in.read(buffer, kChunk);
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  if (static_cast<std::int64_t>(text.size()) > max_bytes) {
    return bad_input(
        name, "", fmt::format("is larger than {} MiB; {} is far smaller", max_bytes >> 20, what));
  }
  return text;
}

}  // namespace trainmem::io

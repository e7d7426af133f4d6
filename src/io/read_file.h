// Every file trainmem reads goes through here: only regular files (a device, pipe, socket or
// folder is refused with a message saying what the path is), and never more than a cap.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "trainmem/errors.h"

namespace trainmem::io {

// Caps on the files trainmem reads whole.
inline constexpr std::int64_t kMaxConfigBytes = 16 << 20;        // config.json, index files
inline constexpr std::int64_t kMaxMeasurementBytes = 256 << 20;  // measurement .jsonl files

// What a path that is not a regular file is, in words: "a character device", "a named pipe",
// "a folder", "a socket", "a block device"; nullopt for a regular file or a missing path.
std::optional<std::string> describe_non_file(const std::filesystem::path& path);

// The whole file, when it is a regular file of at most `max_bytes`; else an error naming the path
// and the reason ("/dev/zero is a character device, not a file", "is larger than 16 MiB; a
// config.json is far smaller"). `what` names the expected content for the message.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::int64_t max_bytes,
                                      std::string_view what);

}  // namespace trainmem::io

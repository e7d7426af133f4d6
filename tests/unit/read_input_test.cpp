// io/read_file.h and io/json_parse.h: every file is a regular file under a cap, and every JSON
// problem (syntax, 1e400, nesting) is a one-line error that never quotes unbounded input.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/json_parse.h"
#include "io/read_file.h"
#include "util/json_text.h"

namespace trainmem::io {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / fmt::format("trainmem_read_{}", ::getpid());
  fs::create_directories(d);
  return d;
}

TEST(ReadFile, DevicesPipesAndFoldersAreNamed) {
  auto zero = read_regular_file("/dev/zero", kMaxConfigBytes, "a config.json");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message(), "/dev/zero: is a character device, not a file");
  auto dir = read_regular_file("/tmp", kMaxConfigBytes, "a config.json");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().reason.find("a folder"), std::string::npos);
  const fs::path fifo = temp_dir() / "pipe";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto pipe = read_regular_file(fifo, kMaxConfigBytes, "a config.json");  // must not block
  ASSERT_FALSE(pipe.ok());
  EXPECT_NE(pipe.error().reason.find("a named pipe, not a file"), std::string::npos);
  fs::remove(fifo);
}

TEST(ReadFile, CapIsEnforcedAndSmallFilesRead) {
  const fs::path big = temp_dir() / "big.json";
  {
    std::ofstream out(big);
    out << std::string((1 << 20) + 1, ' ');
  }
  auto r = read_regular_file(big, 1 << 20, "a config.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().reason.find("larger than 1 MiB"), std::string::npos);
  auto ok = read_regular_file(big, 2 << 20, "a config.json");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().size(), std::size_t{(1 << 20) + 1});
  fs::remove(big);
}

TEST(JsonParse, NumbersOutOfRangeAndDepth) {
  auto huge = parse_json(R"({"a": 1e400})", "c.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().reason.find("out of range"), std::string::npos);
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  auto d = parse_json(deep, "c.json");
  ASSERT_FALSE(d.ok());
  EXPECT_LT(d.error().message().size(), 120u);  // never prints the input
  EXPECT_NE(d.error().reason.find("nested more than 64"), std::string::npos);
  // Brackets inside strings do not count toward the depth.
  EXPECT_TRUE(parse_json("{\"a\": \"" + std::string(100, '[') + "\"}", "c.json").ok());
  EXPECT_TRUE(parse_json(std::string(64, '[') + std::string(64, ']'), "c.json").ok());
  EXPECT_FALSE(parse_json(std::string(65, '[') + std::string(65, ']'), "c.json").ok());
}

TEST(JsonText, ExcerptsAreBoundedAndInvalidUtf8IsReplaced) {
  const nlohmann::json long_string = std::string(10000, 'x');
  EXPECT_EQ(json_excerpt(long_string).size(), 63u);  // 60 + "..."
  const nlohmann::json bad = std::string(
      "a\xff"
      "b");
  EXPECT_EQ(safe_dump(bad),
            "\"a\xEF\xBF\xBD"
            "b\"");  // U+FFFD, no exception
}

}  // namespace
}  // namespace trainmem::io

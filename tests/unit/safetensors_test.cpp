// safetensors header parsing: one test per malformed-input case, plus valid files and folders.
#include "io/safetensors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "support/safetensors_writer.h"

namespace trainmem::io {
namespace {

namespace fs = std::filesystem;
using testing::le_u64;
using testing::st_file_bytes;
using testing::StEntry;
using testing::TempDir;
using testing::write_bytes;

const std::string kFile = "t.safetensors";

Result<std::vector<SafetensorsTensor>> parse(const std::string& bytes) {
  return parse_safetensors_header(bytes, static_cast<std::int64_t>(bytes.size()), kFile);
}

// A file whose header is `json` and whose data section is `data` zero bytes.
Result<std::vector<SafetensorsTensor>> parse_json(const std::string& json, std::int64_t data) {
  return parse(st_file_bytes(json, data));
}

// Expects an error naming kFile, whose field contains `field` and whose reason contains `reason`.
template <class T>
void expect_error(const Result<T>& r, const std::string& field, const std::string& reason) {
  ASSERT_FALSE(r.ok()) << "expected an error about " << field;
  EXPECT_EQ(r.error().code, ErrorCode::bad_input);
  EXPECT_NE(r.error().field.find(field), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().reason.find(reason), std::string::npos) << r.error().message();
}

std::string tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                   const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

// --- bad input, one case each ---------------------------------------------------------------

TEST(SafetensorsHeader, TruncatedBelowEightBytes) {
  const auto r = parse("\x01\x02\x03");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().file, kFile);
  EXPECT_NE(r.error().reason.find("shorter than the 8-byte header length"), std::string::npos);
}

TEST(SafetensorsHeader, HeaderLengthPastEndOfFile) {
  expect_error(parse(le_u64(100) + "{}"), "header length", "runs past the end of the file");
}

TEST(SafetensorsHeader, HeaderLengthOverLimit) {
  // The file claims to be large enough; the limit must still refuse before anything is read.
  const std::string bytes = le_u64(100'000'001) + "{}";
  expect_error(parse_safetensors_header(bytes, 200'000'000, kFile), "header length",
               "over the 100000000-byte limit");
}

TEST(SafetensorsHeader, HeaderLengthHugeU64) {
  const std::string bytes = le_u64(std::numeric_limits<std::uint64_t>::max()) + "{}";
  expect_error(parse_safetensors_header(bytes, std::numeric_limits<std::int64_t>::max(), kFile),
               "header length", "limit");
}

TEST(SafetensorsHeader, PrefixShorterThanHeader) {
  const std::string bytes = st_file_bytes("{}", 0);
  expect_error(parse_safetensors_header(std::string_view(bytes).substr(0, 9),
                                        static_cast<std::int64_t>(bytes.size()), kFile),
               "header", "were read");
}

TEST(SafetensorsHeader, NotJson) {
  expect_error(parse_json("{\"a\": nope", 0), "header", "JSON");
}

TEST(SafetensorsHeader, InvalidUtf8) {
  expect_error(parse_json("{\"\xff\xfe\":{}}", 0), "header", "not valid JSON");
}

TEST(SafetensorsHeader, NotAnObject) {
  expect_error(parse_json("[1, 2, 3]", 0), "header", "must be a JSON object");
}

TEST(SafetensorsHeader, TooDeeplyNested) {
  expect_error(parse_json(std::string(100, '[') + std::string(100, ']'), 0), "header", "nested");
}

TEST(SafetensorsHeader, EntryNotAnObject) {
  expect_error(parse_json("{\"w\": 3}", 0), "w", "must be a JSON object");
}

TEST(SafetensorsHeader, MissingDtype) {
  expect_error(parse_json("{\"w\":{\"shape\":[1],\"data_offsets\":[0,2]}}", 2), "w.dtype",
               "missing");
}

TEST(SafetensorsHeader, UnknownDtype) {
  expect_error(parse_json("{" + tensor("w", "Q7", "[2]", "[0,2]") + "}", 2), "w.dtype",
               "unknown safetensors dtype \"Q7\"");
}

TEST(SafetensorsHeader, KnownButUnsupportedDtype) {
  expect_error(parse_json("{" + tensor("w", "F6_E2M3", "[4]", "[0,3]") + "}", 3), "w.dtype",
               "not supported");
}

TEST(SafetensorsHeader, NegativeShape) {
  expect_error(parse_json("{" + tensor("w", "BF16", "[-1]", "[0,0]") + "}", 0), "w.shape",
               "not a non-negative integer");
}

TEST(SafetensorsHeader, NonIntegerShape) {
  expect_error(parse_json("{" + tensor("w", "BF16", "[2.5]", "[0,5]") + "}", 5), "w.shape",
               "not a non-negative integer");
}

TEST(SafetensorsHeader, AbsurdShapeBeyondInt64) {
  expect_error(parse_json("{" + tensor("w", "BF16", "[18446744073709551615]", "[0,2]") + "}", 2),
               "w.shape", "not a non-negative integer");
}

TEST(SafetensorsHeader, ElementCountOverflow) {
  expect_error(parse_json("{" + tensor("w", "U8", "[4294967296,4294967296]", "[0,1]") + "}", 1),
               "w.shape", "element count overflows");
}

TEST(SafetensorsHeader, ByteCountOverflow) {
  expect_error(parse_json("{" + tensor("w", "F64", "[4611686018427387904]", "[0,1]") + "}", 1),
               "w.shape", "byte size overflows");
}

TEST(SafetensorsHeader, SubByteTotal) {
  expect_error(parse_json("{" + tensor("w", "F4", "[3]", "[0,2]") + "}", 2), "w.shape",
               "whole number of bytes");
}

TEST(SafetensorsHeader, OffsetsNotAPair) {
  expect_error(parse_json("{" + tensor("w", "U8", "[2]", "[0]") + "}", 2), "w.data_offsets",
               "[begin, end]");
}

TEST(SafetensorsHeader, OffsetBeginAfterEnd) {
  expect_error(parse_json("{" + tensor("w", "U8", "[0]", "[4,2]") + "}", 4), "w.data_offsets",
               "is after end");
}

TEST(SafetensorsHeader, SizeMismatchBetweenShapeAndOffsets) {
  expect_error(parse_json("{" + tensor("w", "BF16", "[4]", "[0,6]") + "}", 6), "w.data_offsets",
               "spans 6 bytes but shape x dtype is 8 bytes");
}

TEST(SafetensorsHeader, OffsetsOutOfBounds) {
  expect_error(parse_json("{" + tensor("w", "BF16", "[4]", "[0,8]") + "}", 4), "w.data_offsets",
               "past the data section (4 bytes)");
}

TEST(SafetensorsHeader, OverlappingOffsets) {
  const std::string json =
      "{" + tensor("a", "BF16", "[4]", "[0,8]") + "," + tensor("b", "BF16", "[4]", "[4,12]") + "}";
  expect_error(parse_json(json, 12), "b.data_offsets", "overlaps a");
}

TEST(SafetensorsHeader, GapBetweenTensors) {
  const std::string json =
      "{" + tensor("a", "BF16", "[4]", "[0,8]") + "," + tensor("b", "BF16", "[4]", "[10,18]") + "}";
  expect_error(parse_json(json, 18), "b.data_offsets", "gap of 2 bytes");
}

TEST(SafetensorsHeader, TrailingBytesNotCovered) {
  expect_error(parse_json("{" + tensor("w", "BF16", "[4]", "[0,8]") + "}", 10), "data_offsets",
               "cover 8 bytes but the data section holds 10");
}

TEST(SafetensorsHeader, MetadataNotAMap) {
  expect_error(parse_json("{\"__metadata__\": [1]}", 0), "__metadata__", "object of strings");
}

TEST(SafetensorsHeader, MetadataValueNotAString) {
  expect_error(parse_json("{\"__metadata__\": {\"format\": 1}}", 0), "__metadata__.format",
               "must be strings");
}

// --- valid headers --------------------------------------------------------------------------

TEST(SafetensorsHeader, ParsesEntriesSortedByOffset) {
  const std::string json =
      "{\"__metadata__\":{\"format\":\"pt\"}," + tensor("b", "F32", "[2,3]", "[4,28]") + "," +
      tensor("a", "BF16", "[2]", "[0,4]") + "," + tensor("s", "I64", "[]", "[28,36]") + "," +
      tensor("e", "F16", "[0,5]", "[36,36]") + "," + tensor("f", "F4", "[4]", "[36,38]") + "}";
  const auto r = parse_json(json, 38);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].name, "a");
  EXPECT_EQ((*r)[0].dtype, Dtype::bf16);
  EXPECT_EQ((*r)[1].name, "b");
  EXPECT_EQ((*r)[1].dtype, Dtype::f32);
  EXPECT_EQ((*r)[1].shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ((*r)[1].begin, 4);
  EXPECT_EQ((*r)[1].end, 28);
  EXPECT_EQ((*r)[2].name, "s");
  EXPECT_TRUE((*r)[2].shape.empty());
  EXPECT_EQ((*r)[3].name, "e");
  EXPECT_EQ((*r)[4].dtype, Dtype::fp4);
  EXPECT_EQ((*r)[4].dtype_name, "F4");
  EXPECT_EQ((*r)[4].file, kFile);
}

TEST(SafetensorsHeader, AcceptsWhitespaceAroundJson) {
  const auto r = parse_json("  \n{" + tensor("w", "U8", "[3]", "[0,3]") + "}   ", 3);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->size(), 1u);
}

TEST(SafetensorsHeader, EmptyHeaderAndNoData) {
  const auto r = parse_json("{}", 0);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->empty());
}

TEST(SafetensorsHeader, WriterOutputRoundTrips) {
  const std::vector<StEntry> entries = {
      {"x.weight", "BF16", {4, 3}}, {"x.bias", "F32", {4}}, {"y", "U8", {7}}};
  const auto r = parse(st_file_bytes(entries));
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[2].end, 24 + 16 + 7);
}

// --- files ----------------------------------------------------------------------------------

TEST(SafetensorsFile, TruncatedFile) {
  TempDir dir;
  write_bytes(dir.path() / "a.safetensors", "abc");
  const auto r = read_safetensors_file(dir.path() / "a.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().file, (dir.path() / "a.safetensors").string());
  EXPECT_NE(r.error().reason.find("shorter than"), std::string::npos);
}

TEST(SafetensorsFile, HeaderLengthPastEndOfFile) {
  TempDir dir;
  write_bytes(dir.path() / "a.safetensors", le_u64(1'000'000) + "{}");
  expect_error(read_safetensors_file(dir.path() / "a.safetensors"), "header length",
               "runs past the end");
}

TEST(SafetensorsFile, MissingFile) {
  TempDir dir;
  const auto r = read_safetensors_file(dir.path() / "none.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
}

TEST(SafetensorsFile, ReadsOnlyTheHeaderOfAHugeSparseFile) {
  TempDir dir;
  const fs::path path = dir.path() / "big.safetensors";
  const std::int64_t elements = std::int64_t{1} << 33;  // 16 GiB of BF16, never read
  const std::string json = "{" +
                           tensor("w", "BF16", "[" + std::to_string(elements) + "]",
                                  "[0," + std::to_string(2 * elements) + "]") +
                           "}";
  const std::string head = st_file_bytes(json, 0);
  write_bytes(path, head);
  fs::resize_file(path, head.size() + static_cast<std::uintmax_t>(2 * elements));
  const auto r = read_safetensors_file(path);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ((*r)[0].shape[0], elements);
}

// --- folders --------------------------------------------------------------------------------

std::string index_json(const std::vector<std::pair<std::string, std::string>>& map) {
  std::string json = "{\"metadata\":{\"total_size\":1},\"weight_map\":{";
  for (std::size_t i = 0; i < map.size(); ++i) {
    json += (i ? "," : "") + std::string("\"") + map[i].first + "\":\"" + map[i].second + "\"";
  }
  return json + "}}";
}

TEST(SafetensorsFolder, ReadsShardsNamedByTheIndex) {
  TempDir dir;
  write_bytes(dir.path() / "model-00001-of-00002.safetensors", st_file_bytes({{"a", "BF16", {2}}}));
  write_bytes(dir.path() / "model-00002-of-00002.safetensors", st_file_bytes({{"b", "BF16", {3}}}));
  write_bytes(dir.path() / "model.safetensors.index.json",
              index_json({{"a", "model-00001-of-00002.safetensors"},
                          {"b", "model-00002-of-00002.safetensors"}}));
  const auto r = read_safetensors_folder(dir.path());
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].file, (dir.path() / "model-00002-of-00002.safetensors").string());
}

TEST(SafetensorsFolder, MissingShardNamedByIndex) {
  TempDir dir;
  write_bytes(dir.path() / "model-00001-of-00002.safetensors", st_file_bytes({{"a", "BF16", {2}}}));
  write_bytes(dir.path() / "model.safetensors.index.json",
              index_json({{"a", "model-00001-of-00002.safetensors"},
                          {"b", "model-00002-of-00002.safetensors"}}));
  const auto r = read_safetensors_folder(dir.path());
  expect_error(r, "weight_map.b", "names shard model-00002-of-00002.safetensors, which is not in");
}

TEST(SafetensorsFolder, IndexNamesTensorTheShardLacks) {
  TempDir dir;
  write_bytes(dir.path() / "model-1.safetensors", st_file_bytes({{"a", "BF16", {2}}}));
  write_bytes(dir.path() / "model.safetensors.index.json",
              index_json({{"a", "model-1.safetensors"}, {"c", "model-1.safetensors"}}));
  expect_error(read_safetensors_folder(dir.path()), "weight_map.c", "does not hold it");
}

TEST(SafetensorsFolder, MalformedIndexNotJson) {
  TempDir dir;
  write_bytes(dir.path() / "model.safetensors.index.json", "{\"weight_map\": ");
  expect_error(read_safetensors_folder(dir.path()), "", "not valid JSON");
}

TEST(SafetensorsFolder, MalformedIndexWithoutWeightMap) {
  TempDir dir;
  write_bytes(dir.path() / "model.safetensors.index.json", "{\"metadata\": {}}");
  expect_error(read_safetensors_folder(dir.path()), "weight_map", "missing");
}

TEST(SafetensorsFolder, MalformedIndexShardNotAString) {
  TempDir dir;
  write_bytes(dir.path() / "model.safetensors.index.json", "{\"weight_map\": {\"a\": 3}}");
  expect_error(read_safetensors_folder(dir.path()), "weight_map.a", "must name a shard file");
}

TEST(SafetensorsFolder, IndexMayNotEscapeTheFolder) {
  TempDir dir;
  write_bytes(dir.path() / "model.safetensors.index.json",
              index_json({{"a", "../outside.safetensors"}}));
  expect_error(read_safetensors_folder(dir.path()), "weight_map.a", "inside the folder");
}

TEST(SafetensorsFolder, BadShardReportsTheShard) {
  TempDir dir;
  write_bytes(dir.path() / "model-1.safetensors", "xx");
  write_bytes(dir.path() / "model.safetensors.index.json",
              index_json({{"a", "model-1.safetensors"}}));
  const auto r = read_safetensors_folder(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().file, (dir.path() / "model-1.safetensors").string());
}

TEST(SafetensorsFolder, WithoutIndexPrefersModelFiles) {
  TempDir dir;
  write_bytes(dir.path() / "model.safetensors", st_file_bytes({{"a", "BF16", {2}}}));
  write_bytes(dir.path() / "consolidated.safetensors", st_file_bytes({{"a", "BF16", {2}}}));
  const auto r = read_safetensors_folder(dir.path());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->size(), 1u);
}

TEST(SafetensorsFolder, WithoutIndexDuplicateTensorAcrossFiles) {
  TempDir dir;
  write_bytes(dir.path() / "model-a.safetensors", st_file_bytes({{"a", "BF16", {2}}}));
  write_bytes(dir.path() / "model-b.safetensors", st_file_bytes({{"a", "BF16", {2}}}));
  expect_error(read_safetensors_folder(dir.path()), "a", "also stored in another file");
}

TEST(SafetensorsFolder, EmptyFolder) {
  TempDir dir;
  const auto r = read_safetensors_folder(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
}

}  // namespace
}  // namespace trainmem::io

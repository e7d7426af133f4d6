// The dataset reader, the token estimate and the percentiles, against hand-computed values.
#include "io/dataset.h"

#include <gtest/gtest.h>

#include <limits>

#include "trainmem/import.h"

namespace trainmem {
namespace {

DatasetRecords read_ok(std::string_view text, DatasetFormat f = DatasetFormat::jsonl) {
  auto r = read_dataset_records(text, f, "d.jsonl");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r.value() : DatasetRecords{};
}

std::string error_of(std::string_view text, DatasetFormat f = DatasetFormat::jsonl) {
  auto r = read_dataset_records(text, f, "d.jsonl");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message();
}

TEST(DatasetRecords, EachSchemaCountsTheBytesOfItsText) {
  const auto r = read_ok(
      R"({"text": "hello world"})"
      "\n"
      R"({"messages": [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}]})"
      "\n"
      R"({"conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello!"}]})"
      "\n"
      R"({"prompt": "Say hi", "completion": " hi"})"
      "\n"
      R"({"instruction": "Add", "input": "1 2", "output": "3"})"
      "\n"
      R"({"instruction": "Add", "output": "3"})"
      "\n");
  // 11; 12 + 1; 2 + 6; 6 + 3; 3 + 3 + 1; 3 + 1 ("input" is optional).
  EXPECT_EQ(r.bytes, (std::vector<std::int64_t>{11, 13, 8, 9, 7, 4}));
  EXPECT_EQ(r.schemas,
            (std::vector<std::string>{"text", "messages[].content", "conversations[].value",
                                      "prompt+completion", "instruction+input+output"}));
}

TEST(DatasetRecords, ConversationalPromptCompletionAndContentParts) {
  const auto r = read_ok(
      R"({"prompt": [{"role": "user", "content": "abc"}], "completion": [{"role": "assistant", "content": "de"}]})"
      "\n"
      R"({"messages": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "four"}]}]})");
  EXPECT_EQ(r.bytes, (std::vector<std::int64_t>{5, 4}));  // 3 + 2; the image part has no text
}

TEST(DatasetRecords, BlankLinesCrlfAndAByteOrderMarkAreSkipped) {
  const auto r = read_ok("\xEF\xBB\xBF{\"text\": \"ab\"}\r\n\n   \n{\"text\": \"\xC3\xA9\"}\n");
  EXPECT_EQ(r.bytes, (std::vector<std::int64_t>{2, 2}));  // é is two UTF-8 bytes
  EXPECT_EQ(r.non_ascii_bytes, 2);
}

TEST(DatasetRecords, JsonArrayAndTextLines) {
  const auto a = read_ok(R"([{"text": "abc"}, {"text": "de"}])", DatasetFormat::json_array);
  EXPECT_EQ(a.bytes, (std::vector<std::int64_t>{3, 2}));
  const auto t =
      read_ok("first line\n\n  \nsecond, longer line\r\nthird", DatasetFormat::text_lines);
  EXPECT_EQ(t.bytes, (std::vector<std::int64_t>{10, 19, 5}));
}

TEST(DatasetRecords, ErrorsNameTheLineTheKeyAndTheReason) {
  EXPECT_EQ(error_of("{\"text\": \"a\"}\n{\"text\": \"b"),
            "d.jsonl: line 2: not valid JSON (near byte 12)");
  const std::string missing =
      error_of("{\"text\": \"a\"}\n{\"question\": \"q\", \"answer\": \"a\"}");
  EXPECT_NE(missing.find("d.jsonl: line 2: no text field: looked for \"text\", \"messages\""),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.find("the record has \"answer\", \"question\""), std::string::npos) << missing;
  EXPECT_EQ(error_of("{\"text\": 5}"), "d.jsonl: line 1: text: expected a string, got a number");
  EXPECT_EQ(error_of("{\"messages\": [{\"role\": \"user\"}]}"),
            "d.jsonl: line 1: messages[0]: a turn has neither \"content\" nor \"value\"");
  EXPECT_EQ(error_of("[1, 2]"), "d.jsonl: line 1: expected a JSON object, got a list");
  EXPECT_EQ(error_of("\n  \n"), "d.jsonl: holds no records");
  EXPECT_EQ(error_of("[{\"text\": \"a\"}, 3]", DatasetFormat::json_array),
            "d.jsonl: [1]: expected a JSON object, got a number");
  EXPECT_EQ(error_of(std::string_view("ab\0cd", 5), DatasetFormat::text_lines),
            "d.jsonl: is not UTF-8 text (byte 2 is 0x00)");
  EXPECT_EQ(error_of("ok\n\xFF\xFE", DatasetFormat::text_lines),
            "d.jsonl: is not UTF-8 text (byte 3 is 0xff)");
  EXPECT_EQ(error_of("cut \xE2\x82", DatasetFormat::text_lines),
            "d.jsonl: is not UTF-8 text (byte 4 is 0xe2)");
}

TEST(DatasetFormat, FromTheNameAndTheFirstByte) {
  EXPECT_EQ(dataset_format_of("a.JSONL", "").value(), DatasetFormat::jsonl);
  EXPECT_EQ(dataset_format_of("a.txt", "").value(), DatasetFormat::text_lines);
  EXPECT_EQ(dataset_format_of("a.json", "  [{}]").value(), DatasetFormat::json_array);
  EXPECT_EQ(dataset_format_of("a.json", "{\"text\": \"x\"}\n").value(), DatasetFormat::jsonl);
  const auto parquet = dataset_format_of("train.parquet", "PAR1");
  ASSERT_FALSE(parquet.ok());
  EXPECT_NE(parquet.error().message().find("pd.read_parquet"), std::string::npos);
  EXPECT_FALSE(dataset_format_of("renamed.jsonl", "PAR1\x15").ok());  // Parquet's magic bytes
  EXPECT_FALSE(dataset_format_of("a.csv", "").ok());
}

TEST(DatasetTokens, BytesPerTokenByVocabularyBand) {
  EXPECT_EQ(bytes_per_token_for_vocab(32'000).centibytes, 317);  // Llama 2
  EXPECT_EQ(bytes_per_token_for_vocab(99'999).centibytes, 317);
  EXPECT_EQ(bytes_per_token_for_vocab(100'000).centibytes, 394);  // Llama 3 and larger
  EXPECT_EQ(bytes_per_token_for_vocab(151'936).centibytes, 394);
  const BytesPerToken large = bytes_per_token_for_vocab(128'256);
  EXPECT_EQ(estimated_tokens(11, large), 3);     // 11 / 3.94 = 2.79, rounded up
  EXPECT_EQ(estimated_tokens(394, large), 100);  // exactly 100 tokens
  EXPECT_EQ(estimated_tokens(395, large), 101);  // 100.25, rounded up
  EXPECT_EQ(estimated_tokens(0, large), 1);      // an empty record still trains on one token
  EXPECT_EQ(estimated_tokens(11, bytes_per_token_for_vocab(32'000)), 4);
  // Past 2^63 / 100 bytes the count is still positive and near bytes / 3.94 (no overflow).
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(estimated_tokens(huge, large), huge / 394 * 100);  // 11 / 3.17 = 3.47
}

TEST(DatasetTokens, NearestRankPercentiles) {
  EXPECT_EQ(percentile_nearest_rank({1, 2, 3, 4}, 50), 2);  // rank ceil(2) = 2
  EXPECT_EQ(percentile_nearest_rank({1, 2, 3, 4}, 95), 4);  // rank ceil(3.8) = 4
  EXPECT_EQ(percentile_nearest_rank({7}, 50), 7);
  std::vector<std::int64_t> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i * 10);
  EXPECT_EQ(percentile_nearest_rank(twenty, 95), 190);  // rank 19
  EXPECT_EQ(percentile_nearest_rank(twenty, 50), 100);  // rank 10
  EXPECT_EQ(percentile_nearest_rank(twenty, 100), 200);
}

TEST(DatasetTokens, LengthsOfRecords) {
  DatasetRecords r;
  r.bytes = {13, 8, 9, 7, 11};  // tokens at 3.94: 4, 3, 3, 2, 3
  const TokenLengths l = token_lengths(r, bytes_per_token_for_vocab(151'936));
  EXPECT_EQ(l.sorted, (std::vector<std::int64_t>{2, 3, 3, 3, 4}));
  EXPECT_EQ(l.p50, 3);  // rank ceil(2.5) = 3
  EXPECT_EQ(l.p95, 4);  // rank ceil(4.75) = 5
  EXPECT_EQ(l.max, 4);
  EXPECT_EQ(l.total, 15);
  EXPECT_EQ(l.mean, 3);
  EXPECT_EQ(records_longer_than(l, 3), 1);
  EXPECT_EQ(records_longer_than(l, 2), 4);
  EXPECT_EQ(records_longer_than(l, 4), 0);
}

// The pricing with a stand-in price: peak = batch x seq bytes, against 2,000 usable bytes.
Result<LengthPrice> linear_price(const TrainingPlan& p) {
  LengthPrice out;
  out.peak_bytes = p.batch * p.seq;
  out.fit = fit(out.peak_bytes, custom_device(2'000));
  return out;
}

TEST(DatasetFit, PricesP50P95AndTheLongestCappedAtMaxLength) {
  // 19 records of 100..1,900 tokens and one of 8,000 (394 x t / 100 bytes each at 3.94).
  std::string text;
  for (int t = 100; t <= 1900; t += 100) {
    text += "{\"text\": \"" + std::string(static_cast<std::size_t>(394 * t / 100), 'x') + "\"}\n";
  }
  text += "{\"text\": \"" + std::string(394 * 80, 'x') + "\"}\n";
  TrainingPlan plan;
  plan.batch = 1;
  DatasetSource s{"d.jsonl", text, 151'936, "", 4096, 0};
  auto d = fit_dataset(s, plan, linear_price);
  ASSERT_TRUE(d.ok()) << d.error().message();
  ASSERT_EQ(d->rows.size(), 4u);  // p50, p95, max, packed
  EXPECT_EQ(d->rows[0].at, "p50");
  EXPECT_EQ(d->rows[0].seq, 1000);
  EXPECT_EQ(d->rows[1].seq, 1900);
  EXPECT_EQ(d->rows[2].tokens, 8000);
  EXPECT_EQ(d->rows[2].seq, 4096);  // truncated at max_length
  EXPECT_EQ(d->rows[3].at, "packed");
  EXPECT_TRUE(d->rows[1].price.fit->fits);
  EXPECT_FALSE(d->rows[2].price.fit->fits);
  EXPECT_EQ(d->truncated_records, 1);
  EXPECT_EQ(d->p95_truncated_records, 1);
  EXPECT_EQ(d->p95_saves_bytes, 4096 - 1900);
  EXPECT_EQ(d->lengths.mean, 1350);  // (19,000 + 8,000) / 20
  EXPECT_NE(d->advice[0].find("max_length 4,096 truncates 1 of 20 records (5.0%)"),
            std::string::npos);
  EXPECT_NE(d->advice[1].find("would truncate 1 record (5.0%)"), std::string::npos);
}

TEST(DatasetFit, PaddingFreeIsPricedAsOneRowOfTheMeanBatchUnderFlashAttention) {
  const std::string text = "{\"text\": \"" + std::string(394, 'x') + "\"}\n{\"text\": \"" +
                           std::string(394 * 3, 'x') + "\"}\n";  // 100 and 300 tokens
  TrainingPlan plan;
  plan.batch = 4;
  plan.attention = Attention::flash;
  DatasetSource s{"d.jsonl", text, 151'936, "", std::nullopt, 0};
  auto d = fit_dataset(s, plan, linear_price);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->rows.size(), 4u);  // p50, p95, max, padding-free (no packed: no max_length)
  EXPECT_EQ(d->rows[3].at, "padding-free");
  EXPECT_EQ(d->rows[3].batch, 1);
  EXPECT_EQ(d->rows[3].seq, 800);                // 4 x mean 200
  EXPECT_EQ(d->rows[2].price.peak_bytes, 1200);  // 4 x 300: padded to the longest
  EXPECT_FALSE(d->p95_saves_bytes.has_value());  // max 300 is the p95 (rank 2 of 2)
}

}  // namespace
}  // namespace trainmem

// The tokenizer.json reader (src/io/tokenizer/): token counts equal the Hugging Face `tokenizers`
// library's on tokenizers it trained (tests/data/tokenizers/, made by make_tokenizers.py), the BPE
// merge order on hand-worked words, and every unsupported or malformed file is an error naming
// its field.
#include "io/tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/tokenizer/bpe.h"

namespace trainmem::tok {
namespace {

const std::string kDir = std::string(TRAINMEM_SOURCE_DIR) + "/tests/data/tokenizers/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TokenizerExact : public ::testing::TestWithParam<std::string> {};

// Every test string's count equals the library's `len(encode(s, add_special_tokens=False).ids)`.
TEST_P(TokenizerExact, CountsEqualTheTokenizersLibrary) {
  const auto expected = nlohmann::json::parse(slurp(kDir + "expected_counts.json"));
  const auto& strings = expected.at("strings");
  const auto& counts = expected.at("counts").at(GetParam());
  auto t = load_tokenizer_file(kDir + GetParam() + ".json");
  ASSERT_TRUE(t.ok()) << t.error().message();
  ASSERT_EQ(strings.size(), counts.size());
  for (std::size_t i = 0; i < strings.size(); ++i) {
    const std::string s = strings[i].get<std::string>();
    auto n = t->count(s);
    ASSERT_TRUE(n.ok()) << n.error().message();
    EXPECT_EQ(*n, counts[i].get<std::int64_t>()) << "string " << i << ": " << s;
  }
  // Counted again from the word cache: the same.
  for (std::size_t i = 0; i < strings.size(); ++i) {
    EXPECT_EQ(*t->count(strings[i].get<std::string>()), counts[i].get<std::int64_t>());
  }
}

INSTANTIATE_TEST_SUITE_P(Trained, TokenizerExact,
                         ::testing::Values("gpt2_bytelevel", "gpt2_prefix_space", "llama3_split",
                                           "qwen2_nfc", "llama2_prepend", "mistral_metaspace",
                                           "metaspace_digits_nfkc", "split_behaviours",
                                           "split_next_contiguous"),
                         [](const auto& param_info) { return param_info.param; });

BpeModel tiny_model(bool byte_fallback, bool fuse_unk) {
  BpeModel m;
  for (const char* t : {"a", "b", "c", "ab", "bc", "abc", "aa", "<unk>"}) {
    m.vocab.emplace(t, static_cast<std::uint32_t>(m.vocab.size()));
  }
  const auto id = [&](const char* t) { return m.vocab.at(t); };
  // Ranks: "b c" first, then "a b", "a bc", "a a".
  m.merges[pair_key(id("b"), id("c"))] = {0, id("bc")};
  m.merges[pair_key(id("a"), id("b"))] = {1, id("ab")};
  m.merges[pair_key(id("a"), id("bc"))] = {2, id("abc")};
  m.merges[pair_key(id("a"), id("a"))] = {3, id("aa")};
  m.unk_id = id("<unk>");
  m.fuse_unk = fuse_unk;
  if (byte_fallback) {
    m.byte_fallback = true;
    m.vocab.emplace("<0xC3>", 100);
    m.vocab.emplace("<0xA9>", 101);
    m.byte_ids[0xC3] = 100;
    m.byte_ids[0xA9] = 101;
  }
  return m;
}

TEST(BpeModel, MergesTheLowestRankFirstAndTheLeftmostOfEqualRanks) {
  const BpeModel m = tiny_model(false, false);
  // abc: "b c" (rank 0) before "a b" (rank 1), then "a bc" -> one token.
  EXPECT_EQ(m.count_word("abc"), 1);
  // abab: "a b" twice -> ab ab.
  EXPECT_EQ(m.count_word("abab"), 2);
  // aaa: the leftmost "a a" -> aa a.
  EXPECT_EQ(m.count_word("aaa"), 2);
  // cab: c, then "a b" -> c ab.
  EXPECT_EQ(m.count_word("cab"), 2);
  EXPECT_EQ(m.count_word(""), 0);
}

TEST(BpeModel, UnknownCharactersTakeByteFallbackOrTheUnknownToken) {
  // x y z are not in the vocabulary: three <unk>, or one when fused.
  EXPECT_EQ(tiny_model(false, false).count_word("xyz"), 3);
  EXPECT_EQ(tiny_model(false, true).count_word("xyz"), 1);
  EXPECT_EQ(tiny_model(false, true).count_word("xaz"), 3);  // <unk> a <unk>
  // é is C3 A9: two byte tokens with byte fallback; one <unk> without.
  EXPECT_EQ(tiny_model(true, false).count_word("\xC3\xA9"), 2);
  EXPECT_EQ(tiny_model(false, false).count_word("\xC3\xA9"), 1);
  // ignore_merges: a word that is a token is one token.
  BpeModel m = tiny_model(false, false);
  m.ignore_merges = true;
  m.vocab.emplace("cc", 200);
  EXPECT_EQ(m.count_word("cc"), 1);
}

// A minimal tokenizer.json around `model` with the given normalizer and pre_tokenizer.
std::string file_with(
    const std::string& normalizer, const std::string& pre,
    const std::string& model =
        R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})",
    const std::string& added = "[]") {
  return R"({"version": "1.0", "added_tokens": )" + added + R"(, "normalizer": )" + normalizer +
         R"(, "pre_tokenizer": )" + pre + R"(, "model": )" + model + "}";
}

std::string error_of(const std::string& text) {
  auto t = load_tokenizer(text, "tokenizer.json");
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : t.error().message();
}

TEST(TokenizerLoad, AHandWrittenFileCounts) {
  auto t = load_tokenizer(file_with("null", "null"), "tokenizer.json");
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(*t->count("abab"), 2);  // ab ab
  EXPECT_EQ(*t->count("aba"), 2);   // ab a
  // Not UTF-8: an error, not a count.
  EXPECT_FALSE(t->count("a\xFF").ok());

  // A pair listed twice keeps its last rank: "a b" (rank 3) after "b c" (1), so abc is b c, then
  // a bc -> one token; the first rank would give ab c. tokenizers 0.23.3 gives ['abc'] too.
  auto twice = load_tokenizer(
      file_with("null", "null",
                R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5},
                    "merges": ["a b", "b c", "a bc", "a b"]})"),
      "tokenizer.json");
  ASSERT_TRUE(twice.ok()) << twice.error().message();
  EXPECT_EQ(*twice->count("abc"), 1);
}

TEST(TokenizerLoad, WhatIsNotRunIsAnErrorNamingTheFieldAndValue) {
  EXPECT_NE(error_of(file_with("null", "null", R"({"type": "Unigram", "vocab": []})"))
                .find("model.type: \"Unigram\" is not run by trainmem"),
            std::string::npos);
  EXPECT_NE(error_of(file_with("null", "null",
                               R"({"type": "WordPiece", "vocab": {"a": 0}, "unk_token": "a"})"))
                .find("\"WordPiece\""),
            std::string::npos);
  EXPECT_NE(error_of(file_with(R"({"type": "BertNormalizer"})", "null"))
                .find("normalizer.type: \"BertNormalizer\" is not run"),
            std::string::npos);
  EXPECT_NE(error_of(file_with(R"({"type": "Sequence", "normalizers": [{"type": "NFC"},
                                   {"type": "Precompiled", "precompiled_charsmap": ""}]})",
                               "null"))
                .find("normalizer.normalizers[1].type: \"Precompiled\""),
            std::string::npos);
  EXPECT_NE(error_of(file_with("null", R"({"type": "Whitespace"})"))
                .find("pre_tokenizer.type: \"Whitespace\" is not run"),
            std::string::npos);
  EXPECT_NE(error_of(file_with("null", "null",
                               R"({"type": "BPE", "dropout": 0.1, "vocab": {}, "merges": []})"))
                .find("model.dropout"),
            std::string::npos);
  EXPECT_NE(error_of(file_with("null", "null",
                               R"({"type": "BPE", "vocab": {"a": 0}, "merges": [],
                                   "continuing_subword_prefix": "##"})"))
                .find("model.continuing_subword_prefix"),
            std::string::npos);
  EXPECT_NE(
      error_of(file_with("null", "null", R"({"type": "BPE", "vocab": {"a": 0}, "merges": []})",
                         R"([{"id": 0, "content": "a", "single_word": true}])"))
          .find("added_tokens[0].single_word"),
      std::string::npos);
}

TEST(TokenizerLoad, MalformedFilesAreErrorsNotCrashes) {
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(error_of(std::string(100, '[') + std::string(100, ']')).find("nested"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"normalizer": null})").find("model: missing"), std::string::npos);
  // A regex that does not compile names its field.
  EXPECT_NE(error_of(file_with("null", R"({"type": "Split", "pattern": {"Regex": "(unclosed"},
                                         "behavior": "Isolated", "invert": false})"))
                .find("pre_tokenizer.pattern.Regex: the regex does not compile"),
            std::string::npos);
  EXPECT_NE(error_of(file_with("null", R"({"type": "Split", "pattern": {"Regex": "a"},
                                         "behavior": "Sideways", "invert": false})"))
                .find("pre_tokenizer.behavior"),
            std::string::npos);
  EXPECT_NE(error_of(file_with("null", "null",
                               R"({"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]})"))
                .find("model.merges[0]: a merge of tokens that are not in the vocabulary"),
            std::string::npos);
  EXPECT_NE(
      error_of(file_with("null", "null", R"({"type": "BPE", "vocab": {"a": -1}, "merges": []})"))
          .find("model.vocab.a"),
      std::string::npos);
  EXPECT_NE(
      error_of(file_with("null", "null",
                         R"({"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "?"})"))
          .find("model.unk_token"),
      std::string::npos);
  EXPECT_NE(
      error_of(file_with("null", "null", R"({"type": "BPE", "vocab": {"a": 0}, "merges": [5]})"))
          .find("model.merges[0]"),
      std::string::npos);
  EXPECT_NE(error_of(std::string(kMaxTokenizerBytes + 1, ' ')).find("larger than"),
            std::string::npos);
  EXPECT_NE(error_of(file_with("null", R"({"type": "Split", "pattern": {"Regex": ")" +
                                           std::string(kMaxPatternBytes + 1, 'a') +
                                           R"("}, "behavior": "Isolated"})"))
                .find("trainmem reads patterns of up to"),
            std::string::npos);
}

TEST(TokenizerLoad, ABacktrackingRegexStopsWithAnErrorInsteadOfHanging) {
  // (a+)+$ on "aaaa...b" backtracks exponentially: the step limit stops it.
  auto t = load_tokenizer(file_with("null", R"({"type": "Split", "pattern": {"Regex": "(a+)+$"},
                                               "behavior": "Isolated", "invert": false})"),
                          "tokenizer.json");
  ASSERT_TRUE(t.ok()) << t.error().message();
  auto n = t->count(std::string(40, 'a') + "b");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message().find("U_REGEX_TIME_OUT"), std::string::npos) << n.error().message();
}

}  // namespace
}  // namespace trainmem::tok

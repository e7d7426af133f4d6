// --dataset FILE through the command line: small datasets under tests/data/dataset/, priced at
// their p50, p95 and longest record (hand-computed lengths: 3.94 bytes per token for Qwen3's
// 151,936-token vocabulary).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::CliRun;
using trainmem::testing_support::contains;
using trainmem::testing_support::run_cli;

std::string data(const std::string& name) {
  return std::string(TRAINMEM_SOURCE_DIR) + "/tests/data/dataset/" + name;
}

nlohmann::json dataset_json(const std::string& args) {
  const CliRun r = run_cli(args + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  return j.is_object() && j.contains("dataset") ? j["dataset"] : nlohmann::json();
}

TEST(CliDataset, LongTailIsTruncatedAtMaxLengthAndPricedAtEachLength) {
  const auto d = dataset_json("estimate qwen3-0.6b --dataset " + data("long_tail.jsonl") +
                              " --max-length 4k --batch 4 --gpu rtx-4090");
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["format"], "JSON lines");
  EXPECT_EQ(d["records"], 20);
  EXPECT_EQ(d["bytes_per_token"], 3.94);
  EXPECT_EQ(d["tokens"]["p50"], 1000);  // rank 10 of 100, 200, ..., 1,900, 8,000
  EXPECT_EQ(d["tokens"]["p95"], 1900);  // rank 19
  EXPECT_EQ(d["tokens"]["max"], 8000);
  EXPECT_EQ(d["tokens"]["mean"], 1350);
  EXPECT_EQ(d["max_length"], 4096);
  EXPECT_EQ(d["truncated_records"], 1);
  const auto& rows = d["priced"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2]["at"], "max");
  EXPECT_EQ(rows[2]["seq"], 4096);
  EXPECT_EQ(rows[2]["truncated"], true);
  EXPECT_EQ(rows[3]["at"], "packed");
  EXPECT_LT(rows[0]["peak_bytes"].get<long long>(), rows[1]["peak_bytes"].get<long long>());
  EXPECT_LT(rows[1]["peak_bytes"].get<long long>(), rows[2]["peak_bytes"].get<long long>());
  EXPECT_EQ(rows[2]["peak_bytes"], rows[3]["peak_bytes"]);  // both 4 x 4,096
  EXPECT_EQ(rows[2]["fit"]["figure"], "device total");
  EXPECT_EQ(d["truncate_at_p95"]["max_length"], 1900);
  EXPECT_EQ(d["truncate_at_p95"]["truncated_records"], 1);
  EXPECT_EQ(d["truncate_at_p95"]["saves_bytes"].get<long long>(),
            rows[2]["peak_bytes"].get<long long>() - rows[1]["peak_bytes"].get<long long>());
}

TEST(CliDataset, TheMaxRowIsWhatEstimatePricesAtThatSeq) {
  const auto d = dataset_json("estimate qwen3-0.6b --dataset " + data("long_tail.jsonl") +
                              " --seq 4096 --batch 2 --memory 24GB");
  const CliRun plain = run_cli("estimate qwen3-0.6b --seq 4096 --batch 2 --memory 24GB --json");
  const auto j = nlohmann::json::parse(plain.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << plain.out;
  EXPECT_EQ(d["priced"][2]["peak_bytes"], j["fit"]["peak_bytes"]);
  EXPECT_EQ(d["priced"][2]["fit"]["fits"], j["fit"]["fits"]);
}

// The estimate replays one epoch of the dataset's batches through the allocator: 20 records at
// batch 4 are 5 steps, and the device total is the larger of the run's and one step's.
TEST(CliDataset, TheGpuFiguresCoverARunOfTheBatches) {
  const CliRun r = run_cli("estimate qwen3-0.6b --dataset " + data("long_tail.jsonl") +
                           " --max-length 4k --batch 4 --gpu rtx-4090 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object() && j["gpu"].contains("run")) << r.out;
  const auto& g = j["gpu"];
  EXPECT_EQ(g["run"]["steps"], 5);
  EXPECT_GE(g["run"]["peak_reserved_bytes"].get<long long>(),
            g["run"]["peak_allocated_bytes"].get<long long>());
  EXPECT_EQ(g["device_total_bytes"].get<long long>(),
            std::max(g["run"]["device_total_bytes"].get<long long>(),
                     g["by_phase"][g["peak_phase"].get<std::string>()]["device_total_bytes"]
                         .get<long long>()));
  const CliRun text = run_cli("estimate qwen3-0.6b --dataset " + data("long_tail.jsonl") +
                              " --max-length 4k --batch 4 --gpu rtx-4090");
  EXPECT_TRUE(contains(text, "Run reserved")) << text.out;
  EXPECT_TRUE(contains(text, "over 5 of the dataset's batches")) << text.out;
  // Without a dataset there is no run.
  const CliRun plain = run_cli("estimate qwen3-0.6b --seq 4096 --batch 4 --gpu rtx-4090 --json");
  EXPECT_FALSE(nlohmann::json::parse(plain.out, nullptr, false)["gpu"].contains("run"));
}

// Under gradient accumulation every micro-batch is padded to its own longest record: 20 records
// at batch 4 are 5 micro-batches whatever grad_accum is (not 3 steps of 8 records each).
TEST(CliDataset, TheRunReplaysEachMicroBatchAtItsOwnLength) {
  const CliRun r = run_cli("estimate qwen3-0.6b --dataset " + data("long_tail.jsonl") +
                           " --max-length 4k --batch 4 --grad-accum 2 --gpu rtx-4090 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object() && j["gpu"].contains("run")) << r.out;
  EXPECT_EQ(j["gpu"]["run"]["steps"], 5);
}

TEST(CliDataset, TextReportNamesTheEstimateAndTheAdvice) {
  const CliRun r = run_cli("estimate qwen3-0.6b --dataset " + data("long_tail.jsonl") +
                           " --max-length 4096 --batch 4 --gpu rtx-4090");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r, "Tokens per record (estimated): p50 1,000 · p95 1,900 · max 8,000"))
      << r.out;
  EXPECT_TRUE(contains(r, "max_length 4,096 truncates 1 of 20 records (5.0%)")) << r.out;
  EXPECT_TRUE(contains(r, "max_length = 1,900 (the p95) would truncate 1 record (5.0%)")) << r.out;
  EXPECT_TRUE(contains(r, "packing=True (TRL)")) << r.out;
  EXPECT_TRUE(contains(r, "padding_free=True (TRL) needs FlashAttention 2 or 3")) << r.out;
  EXPECT_TRUE(contains(r, "3.94 bytes per token, for vocab_size 151,936")) << r.out;
  EXPECT_TRUE(contains(r, "chat template and special tokens")) << r.out;
}

TEST(CliDataset, EachFormatAndSchema) {
  // chat.jsonl: 13, 8, 9, 7, 11 bytes -> 4, 3, 3, 2, 3 tokens.
  auto d = dataset_json("estimate qwen3-0.6b --dataset " + data("chat.jsonl"));
  EXPECT_EQ(d["tokens"]["total"], 15);
  EXPECT_EQ(d["tokens"]["p50"], 3);
  EXPECT_EQ(d["tokens"]["max"], 4);
  EXPECT_EQ(d["schemas"].size(), 5u);
  EXPECT_EQ(d["max_length"], nullptr);
  // alpaca.json, a JSON array: 16 + 3 + 1 and 14 + 4 bytes -> 6 and 5 tokens.
  d = dataset_json("estimate qwen3-0.6b --dataset " + data("alpaca.json"));
  EXPECT_EQ(d["format"], "JSON array");
  EXPECT_EQ(d["tokens"]["total"], 11);
  // lines.txt: 10, 19, 5 bytes (blank lines skipped) -> 3, 5, 2 tokens.
  d = dataset_json("estimate qwen3-0.6b --dataset " + data("lines.txt"));
  EXPECT_EQ(d["format"], "text lines");
  EXPECT_EQ(d["records"], 3);
  EXPECT_EQ(d["tokens"]["total"], 10);
}

TEST(CliDataset, TextOutsideAsciiIsSaidToBeRougher) {
  // 12 + 9 CJK characters (3 bytes each) and "Grüße aus Köln" (3 two-byte letters).
  const auto d = dataset_json("estimate qwen3-0.6b --dataset " + data("multilingual.jsonl"));
  EXPECT_EQ(d["non_ascii_bytes"], 21 * 3 + 3 * 2);
  EXPECT_NE(d["notes"].dump().find("outside ASCII"), std::string::npos) << d.dump();
  const auto english = dataset_json("estimate qwen3-0.6b --dataset " + data("chat.jsonl"));
  EXPECT_EQ(english["notes"].dump().find("outside ASCII"), std::string::npos);
}

TEST(CliDataset, SmallVocabularyUsesLlama2sFigure) {
  // Mistral-7B-v0.1's 32,000-token vocabulary (as Llama 2's): 3.17 bytes per token; 13 bytes -> 5
  // tokens.
  const auto d = dataset_json("estimate mistral-7b-v0.1 --dataset " + data("chat.jsonl"));
  EXPECT_EQ(d["bytes_per_token"], 3.17);
  EXPECT_EQ(d["tokens"]["max"], 5);
}

TEST(CliDataset, PaddingFreeRowUnderFlashAttention) {
  const auto d = dataset_json("estimate qwen3-0.6b --dataset " + data("long_tail.jsonl") +
                              " --seq 4096 --batch 4 --attention flash");
  const auto& rows = d["priced"];
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[4]["at"], "padding-free");
  EXPECT_EQ(rows[4]["batch"], 1);
  EXPECT_EQ(rows[4]["seq"], 4620);  // 4 x the truncated mean 1,155
}

TEST(CliDataset, MaxLengthFromAFromFileTruncates) {
  // trl_sft_config.yaml sets max_length: 2048.
  const auto d =
      dataset_json("estimate qwen3-0.6b --from " + std::string(TRAINMEM_SOURCE_DIR) +
                   "/tests/data/import/trl_sft_config.yaml --dataset " + data("long_tail.jsonl"));
  EXPECT_EQ(d["max_length"], 2048);
  EXPECT_EQ(d["priced"][2]["seq"], 2048);
}

TEST(CliDataset, AdviseAtTheLongestRecordWithTruncationAsAnOption) {
  const CliRun r = run_cli("advise qwen3-0.6b --dataset " + data("long_tail.jsonl") +
                           " --seq 4096 --batch 4 --gpu rtx-4090 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["dataset"]["truncate_at_p95"]["max_length"], 1900);
  bool found = false;
  for (const auto& o : j["options"]) {
    if (o["flags"] == "--seq 1900") {
      found = true;
      EXPECT_NE(o["cost"].get<std::string>().find("truncates 1 of 20 records"), std::string::npos);
      EXPECT_NE(o["command"].get<std::string>().find("--dataset"), std::string::npos);
    }
  }
  EXPECT_TRUE(found) << r.out;
  // The solver's shorter sequences say what they cut from this dataset too.
  bool shorter = false;
  for (const auto& o : j["options"]) {
    const std::string cost = o["cost"].get<std::string>();
    if (cost.find("with this dataset it truncates") != std::string::npos) shorter = true;
  }
  EXPECT_TRUE(shorter) << r.out;
}

TEST(CliDataset, ALayoutIsPricedAtItsMostLoadedRank) {
  const auto d = dataset_json(
      "estimate qwen3-0.6b --gpus 2 --zero 3 --seq 4096 --gpu a100-80gb "
      "--dataset " +
      data("long_tail.jsonl"));
  ASSERT_TRUE(d.is_object());
  const auto& rows = d["priced"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_LT(rows[0]["peak_bytes"].get<long long>(), rows[2]["peak_bytes"].get<long long>());
  // The max row (1 x 4,096) is what estimate judges for that layout.
  const CliRun plain =
      run_cli("estimate qwen3-0.6b --gpus 2 --zero 3 --seq 4096 --gpu a100-80gb --json");
  const auto j = nlohmann::json::parse(plain.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << plain.out;
  EXPECT_EQ(rows[2]["peak_bytes"], j["fit"]["peak_bytes"]);
}

// A folder with tiny_llama's config.json and `tokenizer` (a file's text) as tokenizer.json.
std::filesystem::path model_with_tokenizer(const std::string& name, const std::string& tokenizer) {
  const auto dir = std::filesystem::temp_directory_path() / ("trainmem_dataset_" + name);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(
      std::string(TRAINMEM_SOURCE_DIR) + "/tests/bad_input/files/tiny_llama.json",
      dir / "config.json", std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "tokenizer.json") << tokenizer;
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CliDataset, ATokenizerTrainmemDoesNotRunKeepsTheEstimateAndSaysWhy) {
  // Not a tokenizer at all, and a Unigram model: each note names the file, the field, the value.
  for (const auto& [name, text, says] :
       {std::tuple{"empty", std::string("{}"), std::string("tokenizer.json: model: missing")},
        std::tuple{
            "unigram", std::string(R"({"model": {"type": "Unigram", "vocab": [["a", -1.0]]}})"),
            std::string("tokenizer.json: model.type: \"Unigram\" is not run by trainmem")}}) {
    const auto dir = model_with_tokenizer(name, text);
    const auto d = dataset_json("estimate " + (dir / "config.json").string() + " --dataset " +
                                data("chat.jsonl"));
    EXPECT_EQ(d["tokenizer_found"], true);
    EXPECT_EQ(d["tokens_estimated"], true);
    EXPECT_EQ(d["tokens_counted_by"], "estimate");
    EXPECT_NE(d["notes"].dump().find("is not used, so the counts are estimates"), std::string::npos)
        << d["notes"].dump();
    std::string notes;
    for (const auto& note : d["notes"]) notes += note.get<std::string>() + "\n";
    EXPECT_NE(notes.find(says), std::string::npos) << notes;
    std::filesystem::remove_all(dir);
  }
}

// With a tokenizer.json beside the config the lengths are exact: each record's count is the
// `tokenizers` library's (tests/data/tokenizers/dataset_expected.json, made by
// make_tokenizers.py), and p50, p95, max and total follow from them by nearest rank.
TEST(CliDataset, ATokenizerBesideTheConfigCountsTheRecordsExactly) {
  const std::string dir_data = std::string(TRAINMEM_SOURCE_DIR) + "/tests/data/tokenizers/";
  const auto expected = nlohmann::json::parse(slurp(dir_data + "dataset_expected.json"));
  std::vector<long long> counts = expected["tokens_per_record"].get<std::vector<long long>>();
  std::sort(counts.begin(), counts.end());
  long long total = 0;
  for (long long c : counts) total += c;
  const std::size_t n = counts.size();  // 40: p50 is rank 20, p95 rank 38
  ASSERT_EQ(n, 40u);

  const auto dir = model_with_tokenizer("exact", slurp(dir_data + "llama3_split.json"));
  const std::string args =
      "estimate " + (dir / "config.json").string() + " --dataset " + dir_data + "dataset.jsonl";
  const auto d = dataset_json(args);
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["tokens_estimated"], false);
  EXPECT_EQ(d["tokens_counted_by"], "exact (tokenizer.json)");
  EXPECT_EQ(d["records"], 40);
  EXPECT_EQ(d["tokens"]["p50"], counts[19]);
  EXPECT_EQ(d["tokens"]["p95"], counts[37]);
  EXPECT_EQ(d["tokens"]["max"], counts[39]);
  EXPECT_EQ(d["tokens"]["total"], total);
  EXPECT_NE(d["tokenizer"].get<std::string>().find("BPE"), std::string::npos);
  EXPECT_NE(d["notes"].dump().find("Token counts are exact"), std::string::npos);
  EXPECT_EQ(d["notes"].dump().find("estimated"), std::string::npos) << d["notes"].dump();

  const CliRun text = run_cli(args);
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_TRUE(contains(
      text, "Tokens per record, exact (tokenizer.json): p50 " + std::to_string(counts[19])))
      << text.out;
  std::filesystem::remove_all(dir);
}

TEST(CliDataset, BadFilesAreOneLineErrors) {
  CliRun r = run_cli("estimate qwen3-0.6b --dataset " + data("missing.jsonl"));
  EXPECT_EQ(r.code, 1) << r.out;
  r = run_cli("estimate qwen3-0.6b --dataset train.parquet");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r, "to_json")) << r.out;
  r = run_cli("advise qwen3-0.6b --gpus 2 --zero 3 --gpu a100-80gb --dataset " +
              data("chat.jsonl"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r, "--dataset: advise prices a dataset on one GPU")) << r.out;
}

}  // namespace

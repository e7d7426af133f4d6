// `trainmem validate` on GPU rows that state their run's lengths (config.step_lengths): the row
// is compared with the replay of that run, one step per length, where a row without them is
// priced at steps all at its seq. litgpt 0.1's loop keeps the logits into the next forward, so
// the step at the longest length carries nothing from a shorter step before it only when it is
// the first (lit-gpt ran the longest sample first; validation/published/convert.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using trainmem::testing_support::run_cli;

const std::string kSource = TRAINMEM_SOURCE_DIR;

// One max_memory_allocated row of litgpt LoRA on the tiny Llama config at b1 s128; `extra` is
// appended to its config (e.g. `,"step_lengths":[128,16]`), `metric` to its measured object.
std::string write_row(const std::string& name, const std::string& extra,
                      const std::string& metric = R"(,"metric":"max_memory_allocated")") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("trainmem_run_" + name + ".jsonl")).string();
  std::ofstream out(path);
  out << R"({"schema":"trainmem.measurement/1","id":")" << name << R"(","config":{"model":")"
      << kSource
      << R"(/validation/configs/llama-tiny.json","method":"lora","framework":"litgpt",)"
         R"("precision":"bf16","batch":1,"seq":128)"
      << extra << R"(},"measured":{"peak_bytes":50000000,"device":"NVIDIA H200")" << metric
      << "}}\n";
  return path;
}

std::int64_t predicted(const std::string& file) {
  const auto r = run_cli("validate " + file + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out)["per_row"][0]["predicted_peak_bytes"].get<std::int64_t>();
}

TEST(CliValidateRun, StepLengthsAreTheRunReplayed) {
  const std::int64_t steps_at_seq = predicted(write_row("flat", ""));
  const std::int64_t longest_first = predicted(write_row("first", R"(,"step_lengths":[128,16])"));
  const std::int64_t shorter_second = predicted(write_row("second", R"(,"step_lengths":[128,8])"));
  const std::int64_t two_at_seq = predicted(write_row("two", R"(,"step_lengths":[128,128])"));
  // Two steps at seq are the two-step stream a row without lengths replays.
  EXPECT_EQ(two_at_seq, steps_at_seq);
  // The longest step first keeps no previous step's logits: below, and set by the first step,
  // so the length of the short step after it does not move it.
  EXPECT_LT(longest_first, steps_at_seq);
  EXPECT_EQ(shorter_second, longest_first);
}

TEST(CliValidateRun, BadStepLengthsNameTheField) {
  const auto over = run_cli("validate " + write_row("over", R"(,"step_lengths":[128,256])"));
  EXPECT_EQ(over.code, 1);
  EXPECT_NE(over.out.find("config.step_lengths[1]: 256 tokens is longer than the row's seq, 128"),
            std::string::npos)
      << over.out;
  const auto zero = run_cli("validate " + write_row("zero", R"(,"step_lengths":[128,0])"));
  EXPECT_EQ(zero.code, 1);
  EXPECT_NE(zero.out.find("config.step_lengths[1]: must be a positive integer token count"),
            std::string::npos)
      << zero.out;
  const auto text = run_cli("validate " + write_row("text", R"(,"step_lengths":"128")"));
  EXPECT_EQ(text.code, 1);
  EXPECT_NE(text.out.find("config.step_lengths: must be a list of 1 to 500 token counts"),
            std::string::npos)
      << text.out;
  const auto cpu = run_cli("validate " + write_row("cpu", R"(,"step_lengths":[128])", ""));
  EXPECT_EQ(cpu.code, 1);
  EXPECT_NE(cpu.out.find("a run of lengths is replayed for GPU rows only"), std::string::npos)
      << cpu.out;
}

}  // namespace

// --framework and --versions through the command line: checked names, did-you-mean, versions,
// and the profile's assumptions in the report.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "support/cli_run.h"

namespace {

using CliResult = trainmem::testing_support::CliRun;
using trainmem::testing_support::run_cli;

TEST(FrameworkCli, UnknownNameIsAOneLineErrorWithASuggestion) {
  const CliResult r = run_cli("estimate qwen3-0.6b --framework torchtun");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out,
            "trainmem: error: --framework: 'torchtun' is not a known framework (did you "
            "mean 'torchtune'?); known: hf, trl, litgpt, torchtune, unsloth, axolotl, mlx\n");
  EXPECT_EQ(run_cli("estimate qwen3-0.6b --framework deepspeed").code, 2);
}

TEST(FrameworkCli, BadVersionsAreErrors) {
  const CliResult v = run_cli("estimate qwen3-0.6b --framework hf@latest");
  EXPECT_EQ(v.code, 2);
  EXPECT_NE(v.out.find("--framework: 'latest' is not a version of transformers"), std::string::npos)
      << v.out;
  const CliResult lib = run_cli("estimate qwen3-0.6b --versions bnb=0.41");
  EXPECT_EQ(lib.code, 2);
  EXPECT_NE(lib.out.find("--versions: 'bnb' is not a library"), std::string::npos) << lib.out;
}

TEST(FrameworkCli, ProfileAssumptionsAreReported) {
  const CliResult r = run_cli("estimate qwen3-0.6b --framework litgpt --method lora");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Framework assumptions (litgpt)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lm_head and the loss run per chunk of 128 positions"), std::string::npos);
  EXPECT_NE(r.out.find("· bf16 ·"), std::string::npos) << "litgpt defaults to bf16-true";
  const CliResult old = run_cli("estimate qwen3-0.6b --framework hf@4.45");
  EXPECT_NE(old.out.find("transformers 4.45"), std::string::npos) << old.out;
  EXPECT_NE(old.out.find("fp32 logits"), std::string::npos) << old.out;
}

// --compile and its aliases price the compiled loss (docs/frameworks.md, "torch.compile"): the
// same ledger from each spelling, a lower peak than eager, the row statistics line in the report
// and the note that the layers are priced as eager.
TEST(FrameworkCli, CompileFlagAndItsAliases) {
  const std::string base = "estimate qwen3-0.6b --method lora --batch 2 --seq 1024";
  const CliResult eager = run_cli(base + " --json");
  ASSERT_EQ(eager.code, 0) << eager.out;
  const CliResult compiled = run_cli(base + " --compile --json");
  ASSERT_EQ(compiled.code, 0) << compiled.out;
  EXPECT_NE(compiled.out, eager.out);
  EXPECT_EQ(eager.out.find("logits.compiled_row_stats"), std::string::npos);
  EXPECT_NE(compiled.out.find("logits.compiled_row_stats"), std::string::npos) << compiled.out;
  for (const char* alias : {" --torch-compile", " --torch_compile"}) {
    EXPECT_EQ(run_cli(base + alias + " --json").out, compiled.out) << alias;
  }
  const CliResult text = run_cli(base + " --compile");
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("Compiled layers: RMSNorms keep their input and rstd"), std::string::npos)
      << text.out;
  const CliResult lines = run_cli("explain" + base.substr(8) + " --compile");
  EXPECT_EQ(lines.code, 0) << lines.out;
  EXPECT_NE(lines.out.find("compiled loss: row max and logsumexp"), std::string::npos) << lines.out;
  EXPECT_EQ(run_cli(base).out.find("torch.compile"), std::string::npos);
}

}  // namespace

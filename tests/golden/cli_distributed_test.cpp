// The distributed layout flags through the command line: per-rank JSON, explain with sources,
// clear errors for layouts that cannot exist, plan, solve --for min-gpus and advise.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.h"

namespace {

using CliRun = trainmem::testing_support::CliRun;
CliRun run(const std::string& args) {
  return trainmem::testing_support::run_cli(args);
}

nlohmann::json run_json(const std::string& args) {
  const CliRun r = run(args + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

TEST(CliDistributed, ZeroStagesPerRankJson) {
  std::int64_t previous = INT64_MAX;
  for (int z = 0; z <= 3; ++z) {
    const auto j =
        run_json("estimate llama-3.1-8b --seq 2048 --gpus 8 --zero " + std::to_string(z));
    EXPECT_EQ(j["schema"], "trainmem.distributed/1");
    EXPECT_EQ(j["layout"]["engine"], "deepspeed");
    EXPECT_EQ(j["layout"]["world_size"], 8);
    ASSERT_EQ(j["ranks"].size(), 1u);
    const std::int64_t peak = j["most_loaded"]["peak_bytes"];
    EXPECT_LE(peak, previous) << "zero " << z;
    previous = peak;
  }
}

// accelerate's accumulate skips FSDP's reduction until the last micro-batch (the hf profile);
// --sync-each-batch reduces every micro-batch: the unsharded gradients' line and the note go, and
// the rank holds less by exactly that line (8,030,261,248 bf16 gradients).
TEST(CliDistributed, SyncEachBatchKeepsFsdpGradientsSharded) {
  const std::string plan = "estimate llama-3.1-8b --seq 2048 --gpus 8 --fsdp full --grad-accum 4";
  const auto kept = run_json(plan);
  const auto synced = run_json(plan + " --sync-each-batch");
  auto line = [](const nlohmann::json& j) -> std::int64_t {
    for (const auto& item : j["ranks"][0]["ledger"]["items"]) {
      if (item["label"].get<std::string>().rfind("Unsharded gradients accumulated", 0) == 0) {
        return item["bytes"].get<std::int64_t>();
      }
    }
    return 0;
  };
  EXPECT_EQ(line(kept), std::int64_t{8'030'261'248} * 2);
  EXPECT_EQ(line(synced), 0);
  auto says = [](const nlohmann::json& j) {
    for (const auto& n : j["notes"]) {
      if (n.get<std::string>().find("--sync-each-batch") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(says(kept));
  EXPECT_FALSE(says(synced));
}

TEST(CliDistributed, PipelineNamesTheMostLoadedStage) {
  const auto j = run_json(
      "estimate llama-3.1-8b --seq 2048 --gpus 8 --tp 2 --sequence-parallel --pp 4 "
      "--distributed-optimizer --grad-accum 8");
  EXPECT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["layout"]["data_parallel"], 1);
  EXPECT_EQ(j["most_loaded"]["name"], "stage 0 (ranks 0-1)");
  const CliRun text =
      run("estimate llama-3.1-8b --seq 2048 --gpus 8 --tp 2 --pp 4 --distributed-optimizer "
          "--grad-accum 8");
  EXPECT_NE(text.out.find("Most-loaded rank: stage 0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Peak per pipeline stage"), std::string::npos);
}

TEST(CliDistributed, ExplainCitesTheEngineSource) {
  const CliRun r = run("explain llama-3.1-8b --gpus 8 --zero 2 --offload optimizer");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("stage_1_and_2.py:2050"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Host memory per node"), std::string::npos);
  EXPECT_NE(r.out.find("single_partition_of_fp32_groups"), std::string::npos);
  const CliRun f = run("explain llama-3.1-8b --gpus 8 --fsdp full --fsdp-version 1");
  EXPECT_NE(f.out.find("_post_forward_reshard"), std::string::npos) << f.out;
}

TEST(CliDistributed, ImpossibleLayoutsAreUsageErrors) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c :
       {Case{"--gpus 8 --tp 3", "--tp: tp x pp x cp = 3 x 1 x 1 = 3 does not divide the 8 GPUs"},
        Case{"--gpus 6 --tp 3", "does not divide the 32 attention heads"},
        Case{"--gpus 8 --nodes 8 --pp 64", "--pp: 64 stages x 1 chunks exceed the 32 layers"},
        Case{"--gpus 2 --ep 2", "--ep: meta-llama/Llama-3.1-8B has no experts"},
        Case{"--gpus 8 --zero 2 --fsdp full", "choose different engines"},
        Case{"--gpus 8 --zero 4", "--zero: must be 0, 1, 2 or 3"},
        Case{"--gpus 8 --fsdp sideways", "--fsdp: 'sideways' is not one of"},
        Case{"--gpus 8 --zero 2 --offload params", "parameter offload needs --zero 3"},
        Case{"--gpus 8 --fsdp hybrid", "needs --nodes greater than 1"},
        Case{"--gpus 0", "--gpus: must be between 1"}}) {
    const CliRun r = run(std::string("estimate llama-3.1-8b ") + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << "\n" << r.out;
  }
  const CliRun moe = run("estimate mixtral-8x7b-v0.1 --gpus 6 --ep 3");
  EXPECT_EQ(moe.code, 2);
  EXPECT_NE(moe.out.find("does not divide the 8 experts"), std::string::npos) << moe.out;
}

TEST(CliDistributed, PlanRanksFittingLayouts) {
  const auto j = run_json(
      "plan llama-3.1-8b --gpu h100 --seq 4096 --checkpointing full "
      "--max-gpus 16 --top 5");
  EXPECT_EQ(j["schema"], "trainmem.plan/1");
  EXPECT_GT(j["searched"].get<std::int64_t>(), 100);
  ASSERT_GE(j["layouts"].size(), 1u);
  std::int64_t gpus = 0;
  for (const auto& row : j["layouts"]) {
    EXPECT_GE(row["headroom_bytes"].get<std::int64_t>(), 0);
    EXPECT_GE(row["gpus"].get<std::int64_t>(), gpus);  // fewest GPUs first
    gpus = row["gpus"];
  }
  // Each row's flags reproduce its peak through estimate.
  const auto& first = j["layouts"][0];
  const auto again = run_json("estimate llama-3.1-8b --gpu h100 --seq 4096 --checkpointing full " +
                              first["flags"].get<std::string>());
  EXPECT_EQ(again["most_loaded"]["peak_bytes"], first["peak_bytes"]);
}

// plan takes the cluster as --gpus N --nodes M (N per node, at most N x M in all), as estimate's
// layout flags say it; a flag that names one layout is refused, not silently replaced.
TEST(CliDistributed, PlanReadsTheClusterFromGpusAndNodes) {
  const auto j = run_json("plan llama-3.1-70b --gpu h100 --seq 4096 --gpus 4 --nodes 2 --top 50");
  ASSERT_GE(j["layouts"].size(), 1u);
  bool two_nodes = false;
  for (const auto& row : j["layouts"]) {
    EXPECT_LE(row["gpus"].get<std::int64_t>(), 8) << row["flags"];
    const std::string flags = row["flags"];
    EXPECT_NE(flags.find("--gpus "), std::string::npos);
    EXPECT_EQ(flags.find("--gpus 8"), std::string::npos) << flags;  // at most 4 in a node
    two_nodes = two_nodes || flags.find("--nodes 2") != std::string::npos;
  }
  EXPECT_TRUE(two_nodes) << j.dump();
  for (const char* refused : {"--zero 3", "--fsdp full", "--tp 2", "--offload both"}) {
    const CliRun r = run(std::string("plan llama-3.1-70b --gpu h100 ") + refused);
    EXPECT_EQ(r.code, 2) << refused;
    EXPECT_NE(r.out.find("plan searches"), std::string::npos) << r.out;
  }
  EXPECT_EQ(run("plan llama-3.1-70b --gpu h100 --gpus 8 --gpus-per-node 4").code, 2);
  EXPECT_EQ(run("plan llama-3.1-70b --gpu h100 --gpus 8 --nodes 2 --max-gpus 8").code, 2);
}

// plan ranks on live bytes but shows only layouts that `estimate` with the same flags says fit
// on the device total, with that figure and the same host RAM per node. Llama-3.1-8B on RTX 4090s
// has a layout among the first ten whose live peak fits and whose device total does not.
TEST(CliDistributed, PlanShowsWhatEstimateSaysFits) {
  const std::string model = "llama-3.1-8b --gpu rtx-4090";
  const auto j = run_json("plan " + model + " --host-memory 512GiB --top 10");
  EXPECT_GE(j["over_on_device_total"].get<std::int64_t>(), 1);
  ASSERT_EQ(j["layouts"].size(), 10u);
  for (const auto& row : j["layouts"]) {
    const auto e = run_json("estimate " + model + " " + row["flags"].get<std::string>());
    EXPECT_TRUE(e["fit"]["fits"].get<bool>()) << row["flags"];
    EXPECT_EQ(e["fit"]["peak_bytes"], row["judged_bytes"]) << row["flags"];
    EXPECT_EQ(e["fit"]["margin_bytes"], row["headroom_bytes"]) << row["flags"];
    EXPECT_EQ(e["host_per_node"]["peak_bytes"], row["host_bytes_per_node"]) << row["flags"];
  }
}

// Under FSDP or DeepSpeed, bf16-mixed runs as the engine's bf16 with an fp32 master copy: the
// single-GPU note on how from_pretrained loads fp32 weights would contradict the engine's note.
TEST(CliDistributed, OnePrecisionNoteUnderAnEngineWithAMasterCopy) {
  const auto fsdp = run_json("estimate llama-3.1-8b --gpus 8 --fsdp full");
  const std::string notes = fsdp["notes"].dump();
  EXPECT_EQ(notes.find("bf16-mixed prices"), std::string::npos) << notes;
  EXPECT_NE(notes.find("bf16-fp32-master"), std::string::npos) << notes;
  const auto one = run_json("estimate llama-3.1-8b");
  EXPECT_NE(one["notes"].dump().find("bf16-mixed prices"), std::string::npos);
}

// A sharded rank's gradients appear unit by unit in backward, as a single GPU's do tensor by
// tensor: the replay's peak allocated is the rank's ledger peak up to the allocator's rounding
// (the whole line at backward start put FULL_SHARD 3 GiB and ZeRO-2 1.4 GiB over it).
TEST(CliDistributed, ShardedGradientsReplayAtTheLedgersPeak) {
  for (const char* layout : {"--gpus 8 --fsdp full", "--gpus 8 --zero 2", "--gpus 8 --zero 3"}) {
    const auto j = run_json(std::string("estimate llama-3.1-8b ") + layout);
    const std::int64_t ledger =
        j["ranks"][j["most_loaded"]["index"].get<std::size_t>()]["ledger"]["totals"]["peak_bytes"];
    const std::int64_t allocated = j["gpu"]["peak_allocated_bytes"];
    EXPECT_GE(allocated, ledger - (std::int64_t{64} << 20)) << layout;
    EXPECT_LE(allocated, ledger + (std::int64_t{64} << 20)) << layout;
  }
}

TEST(CliDistributed, MinGpusAndAdvise) {
  const auto j = run_json(
      "solve llama-3.1-70b --gpu h100 --seq 4096 --checkpointing full "
      "--for min-gpus");
  EXPECT_EQ(j["for"], "min-gpus");
  EXPECT_TRUE(j["fits"]);
  // With no layout given, CPU offload is tried too: ZeRO-3 offloading parameters and optimizer
  // states holds 70B on one H100 (the states in host RAM), and the fewest GPUs holding it all
  // is also reported.
  EXPECT_EQ(j["answer"], 1);
  EXPECT_TRUE(j["offload"]);
  EXPECT_GT(j["answer_without_offload"].get<std::int64_t>(), 8);
  EXPECT_GT(j["host_bytes_per_node"].get<std::int64_t>(), std::int64_t{70} << 30);
  // The answer's flags price a fitting plan through estimate.
  const auto e = run_json(
      "estimate llama-3.1-70b --gpu h100 --seq 4096 --checkpointing full --gpus 1 --zero 3 "
      "--offload both");
  EXPECT_TRUE(e["fit"]["fits"]);
  EXPECT_EQ(e["fit"]["peak_bytes"], j["peak_bytes"]);
  // bf16 weights with an fp32 master copy (DeepSpeed/FSDP bf16); the HF default (fp32 weights
  // under autocast) does not fit on any number of 24 GB cards without checkpointing.
  const CliRun a =
      run("advise llama-3.1-8b --gpu rtx-4090 --seq 2048 --precision bf16-fp32-master");
  EXPECT_NE(a.out.find("more GPUs: DeepSpeed ZeRO-3"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("more GPUs: FSDP2 FULL_SHARD"), std::string::npos) << a.out;
  // The single-device solvers refuse a layout rather than ignore it.
  EXPECT_EQ(run("solve llama-3.1-8b --gpu h100 --gpus 8 --zero 3 --for max-batch").code, 2);
}

TEST(CliDistributed, EmitThenFromPricesTheSamePlan) {
  const std::string file = "/tmp/trainmem_cli_emit_megatron.sh";
  const std::string flags =
      "llama-3.1-8b --seq 2048 --gpus 8 --nodes 2 --tp 4 --sequence-parallel --pp 2 "
      "--distributed-optimizer --grad-accum 8 --precision bf16-fp32-master";
  ASSERT_EQ(run("emit megatron " + flags + " -o " + file).code, 0);
  const auto direct = run_json("estimate " + flags);
  const auto from = run_json("estimate llama-3.1-8b --from " + file);
  EXPECT_EQ(from["most_loaded"]["peak_bytes"], direct["most_loaded"]["peak_bytes"]);
  EXPECT_EQ(from["layout"]["describe"], direct["layout"]["describe"]);
  const CliRun wrong = run("emit deepspeed " + flags);
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.out.find("deepspeed writes DeepSpeed ZeRO"), std::string::npos) << wrong.out;
  const CliRun missing = run("estimate llama-3.1-8b --from /nonexistent/ds.json");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("/nonexistent/ds.json: --from: cannot read the file"),
            std::string::npos)
      << missing.out;
}

}  // namespace

namespace {

// A torchtune distributed recipe's custom_sharded_layers and fsdp_cpu_offload: applied under the
// FSDP2 layout the flags give (the embedding and the lm_head as units of their own, everything
// offloaded), a note otherwise.
TEST(CliDistributed, TorchtuneRecipeLayoutSettings) {
  const std::string file =
      std::string(TRAINMEM_SOURCE_DIR) + "/tests/data/import/torchtune_full_distributed.yaml";
  const auto j = run_json("estimate llama-3.1-8b --seq 2048 --gpus 8 --fsdp full --from " + file);
  const auto& knobs = j["ranks"][0]["ledger"]["plan"]["layout"]["fsdp_knobs"];
  EXPECT_EQ(knobs["embedding_unit"], true) << knobs.dump();
  EXPECT_EQ(knobs["head_unit"], true);
  EXPECT_EQ(j["ranks"][0]["ledger"]["plan"]["layout"]["offload_params"], true);
  bool head_line = false;
  for (const auto& i : j["ranks"][0]["ledger"]["items"]) {
    head_line = head_line || i["label"] == "Unsharded lm_head (a unit of its own)";
  }
  EXPECT_TRUE(head_line);
  // A flag wins over the file; on one GPU the file's layout settings are a note.
  const auto flag = run_json(
      "estimate llama-3.1-8b --gpus 8 --fsdp full --custom-sharded-layers "
      "output --from " +
      file);
  EXPECT_EQ(flag["ranks"][0]["ledger"]["plan"]["layout"]["fsdp_knobs"]["embedding_unit"], false);
  const CliRun one = run("estimate llama-3.1-8b --from " + file);
  EXPECT_EQ(one.code, 0);
  EXPECT_NE(one.out.find("custom_sharded_layers applies to an FSDP2 layout"), std::string::npos)
      << one.out;
}

}  // namespace

namespace trainmem::testing_support {
namespace {

// Every launcher file `emit` writes prices, read back through --from, the per-rank figure the plan
// had (the command line takes the settings of a settings file and the layout of a layout file
// together): accelerate's fsdp_activation_checkpointing was written and then dropped (2.5x high),
// a DeepSpeed file with both engines off was read as fp32, a torchrun script lost its LoRA.
TEST(CliDistributed, EmittedFilesPriceThePlanBack) {
  const std::string plan = "llama-3.1-8b --batch 2 --seq 4096 --grad-accum 4 --checkpointing full";
  struct Case {
    const char* format;
    const char* layout;
    const char* replay;  // what the file cannot carry, given again
  };
  for (const Case c :
       {Case{"accelerate-fsdp", "--gpus 8 --fsdp full", "--batch 2 --seq 4096 --grad-accum 4"},
        Case{"deepspeed", "--gpus 8 --zero 2 --method lora",
             "--seq 4096 --checkpointing full --method lora"},
        Case{"torchrun", "--gpus 4 --method lora", ""}}) {
    SCOPED_TRACE(c.format);
    const std::string file = ::testing::TempDir() + "emitted_" + c.format;
    ASSERT_EQ(
        run_cli(std::string("emit ") + c.format + " " + plan + " " + c.layout + " -o " + file).code,
        0);
    const auto direct = estimate_json(plan + " " + c.layout + " --gpu h100-sxm");
    const auto back =
        estimate_json("llama-3.1-8b --from " + file + " " + c.replay + " --gpu h100-sxm");
    EXPECT_EQ(back["fit"]["peak_bytes"], direct["fit"]["peak_bytes"]);
  }
}

}  // namespace
}  // namespace trainmem::testing_support

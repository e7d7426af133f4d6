// The three GPU figures (allocated, reserved, device total), the CUDA context table, and the
// command line that reports them (--alloc-conf, PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF,
// --timeline events).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "gpu/alloc_trace.h"
#include "gpu/caching_allocator.h"
#include "gpu/cuda_context.h"
#include "support/cli_run.h"
#include "support/models.h"
#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/render.h"
#include "verdict/judge.h"

namespace trainmem {
namespace {

using testing_support::load_or_fail;
using testing_support::validation_model;

constexpr std::int64_t MiB = 1 << 20;

TEST(CudaContext, RowsByRuntimeAndFamily) {
  // With lazy loading a context holds what was made at its creation plus the kernels a training
  // step loads: 240 MiB on the H200 (804,061,184 B from the first backward on, 552,402,944 B
  // before the first GEMM).
  constexpr std::int64_t step_kernels = 804'061'184 - 552'402'944;
  EXPECT_EQ(step_kernels, 240 * MiB);
  // Hopper's own figures, measured on an H200 with CUDA 13.0, applied to CUDA 12 too.
  const auto hopper = gpu::cuda_context("9.0", {12, 8, true});
  EXPECT_EQ(hopper.bytes, 804'061'184);
  EXPECT_FALSE(hopper.estimated);
  EXPECT_EQ(gpu::cuda_context("9.0", {13, 0, true}).bytes, 804'061'184);
  // CUDA 12 on Ada: 426 MiB at creation (sm89) plus Hopper's kernels, so estimated.
  const auto ada = gpu::cuda_context("8.9", {12, 8, true});
  EXPECT_EQ(ada.bytes, 426 * MiB + step_kernels);
  EXPECT_TRUE(ada.estimated);
  EXPECT_TRUE(ada.note.empty());
  EXPECT_NE(ada.source.find("unsloth-zoo PR #1053"), std::string::npos) << ada.source;
  EXPECT_NE(ada.source.find("240 MiB of kernels"), std::string::npos) << ada.source;
  // On CUDA 13 the other families take the runtime's last row (Ada's), estimated.
  const auto ampere13 = gpu::cuda_context("8.0", {13, 0, true});
  EXPECT_EQ(ampere13.bytes, 426 * MiB + step_kernels);
  EXPECT_TRUE(ampere13.estimated);
  // CUDA 11.7 lazy at creation (PR #86509) plus the step's kernels; an eager context holds every
  // kernel from the start, so its figure (PR #86509, and the V100's before 11.7) stands alone.
  EXPECT_EQ(gpu::cuda_context("8.0", {11, 7, true}).bytes, 287'000'000 + step_kernels);
  EXPECT_EQ(gpu::cuda_context("8.0", {12, 1, false}).bytes, 667'000'000);
  const auto v100 = gpu::cuda_context("7.0", {11, 2, true});
  EXPECT_EQ(v100.bytes, 1341 * MiB);
  EXPECT_FALSE(v100.estimated);
  // Unknown device: a note naming the assumed size.
  const auto unknown = gpu::cuda_context("", {12, 8, true});
  EXPECT_NE(unknown.note.find("assumed 666 MiB"), std::string::npos) << unknown.note;
  EXPECT_NE(gpu::cuda_context("13.5", {12, 8, true}).note.find("compute capability 13.5"),
            std::string::npos);
}

TEST(CudaContext, RuntimeVersionsAsTorchPrintsThem) {
  const auto v = gpu::cuda_runtime_of("13.0");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cuda_major, 13);
  EXPECT_EQ(v->cuda_minor, 0);
  EXPECT_TRUE(v->lazy_loading);
  EXPECT_EQ(gpu::cuda_runtime_of("12.8.1")->cuda_minor, 8);
  EXPECT_EQ(gpu::cuda_runtime_of("12")->cuda_minor, 0);
  for (const char* bad : {"", "8.0", "12.", ".8", "12.8.1.0", "123.0", "12.x", "1e2"}) {
    EXPECT_FALSE(gpu::cuda_runtime_of(bad)) << bad;
  }
}

TEST(CudaContext, CublasWorkspacePerHandle) {
  EXPECT_EQ(gpu::cublas_workspace("9.0").cublas_bytes, 32 * MiB);  // 4,096 KiB x 8
  EXPECT_EQ(gpu::cublas_workspace("8.0").cublas_bytes, 8 * MiB + 128 * 1024);
  EXPECT_TRUE(gpu::cublas_workspace("10.0").estimated);
}

TEST(GpuEstimate, FiguresAreOrderedAndAddUp) {
  const LoadedModel m = validation_model("qwen3-tiny");
  TrainingPlan p;
  p.batch = 2;
  p.seq = 256;
  const Ledger l = estimate(m, p);
  GpuOptions o;
  o.compute_capability = "9.0";
  const auto g = gpu_estimate(m, p, l, o);
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(g->available);
  EXPECT_GE(g->peak_allocated_bytes, totals(l).peak_bytes);  // blocks are rounded up
  EXPECT_GE(g->peak_reserved_bytes, g->peak_allocated_bytes);
  EXPECT_EQ(g->context_bytes, 804'061'184);  // Hopper's row (cuda_context.cpp)
  EXPECT_EQ(g->device_total_bytes, g->peak_reserved_bytes + g->context_bytes);
  for (const GpuPhase& ph : g->phases) {
    EXPECT_GE(ph.reserved_bytes, ph.allocated_bytes);
    EXPECT_EQ(ph.device_total_bytes, ph.reserved_bytes + g->context_bytes);
  }
  EXPECT_FALSE(g->oom);
}

TEST(GpuEstimate, ExpandableSegmentsNeverReserveMoreHere) {
  const LoadedModel m = load_or_fail("qwen3-0.6b");
  TrainingPlan p;
  p.batch = 4;
  p.seq = 1024;
  const Ledger l = estimate(m, p);
  GpuOptions fixed;
  GpuOptions expandable;
  expandable.alloc_conf = "expandable_segments:True";
  const auto a = gpu_estimate(m, p, l, fixed);
  const auto b = gpu_estimate(m, p, l, expandable);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(b->expandable_segments);
  EXPECT_LT(b->peak_reserved_bytes, a->peak_reserved_bytes);
  EXPECT_EQ(b->peak_allocated_bytes >= totals(l).peak_bytes, true);
}

// The plan carries the run's PYTORCH_CUDA_ALLOC_CONF, so judge() -- and with it solve, advise,
// sweep and Python -- replays the allocator the run configures, as estimate does.
TEST(GpuEstimate, TheVerdictUsesThePlansAllocatorConfiguration) {
  const LoadedModel m = load_or_fail("qwen3-0.6b");
  TrainingPlan p;
  p.batch = 4;
  p.seq = 1024;
  const Device h100 = *find_device("h100");
  TrainingPlan expandable = p;
  expandable.alloc_conf = "expandable_segments:True";
  const auto replayed = gpu_estimate(m, expandable, estimate(m, expandable),
                                     gpu_options_for(h100, "expandable_segments:True"));
  ASSERT_TRUE(replayed.ok());
  EXPECT_EQ(judge(m, expandable, h100).peak_bytes, replayed->device_total_bytes);
  EXPECT_LT(judge(m, expandable, h100).peak_bytes, judge(m, p, h100).peak_bytes);
  // Without a device the options still carry the plan's configuration.
  EXPECT_EQ(gpu_options_for(std::nullopt, expandable).alloc_conf, "expandable_segments:True");
}

TEST(GpuEstimate, BadAllocConfNamesTheField) {
  const LoadedModel m = validation_model("qwen3-tiny");
  const TrainingPlan p;
  GpuOptions o;
  o.alloc_conf = "expandable_segments:maybe";
  o.alloc_conf_field = "--alloc-conf";
  const auto g = gpu_estimate(m, p, estimate(m, p), o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().field, "--alloc-conf");
  EXPECT_NE(g.error().reason.find("expandable_segments"), std::string::npos);
}

TEST(GpuEstimate, OutOfMemoryNeverFits) {
  const LoadedModel m = load_or_fail("qwen3-8b");
  TrainingPlan p;
  const Ledger l = estimate(m, p);
  auto dev = find_device("rtx-4090");
  ASSERT_TRUE(dev.ok());
  const auto g = gpu_estimate(m, p, l, gpu_options_for(dev.value(), ""));
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->oom);
  EXPECT_EQ(g->oom_slot, 0);  // the weights alone do not fit a 24 GB card
  EXPECT_FALSE(fit_gpu(*g, dev.value()).fits);
}

using testing_support::CliRun;

CliRun cli(const std::string& args, const std::string& env = "") {
  return testing_support::run_cli(args, env);
}

TEST(GpuCli, JsonHasPerPhaseFiguresAndTheVerdictUsesTheDeviceTotal) {
  const CliRun r = cli("estimate qwen3-0.6b --gpu h100 --json",
                       "env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& g = j["gpu"];
  for (const char* k : {"peak_allocated_bytes", "peak_reserved_bytes", "device_total_bytes",
                        "context_bytes", "by_phase"}) {
    EXPECT_TRUE(g.contains(k)) << k;
  }
  const auto& ph = g["by_phase"]["steady state backward_start"];
  for (const char* k : {"allocated_bytes", "reserved_bytes", "device_total_bytes"}) {
    EXPECT_TRUE(ph.contains(k)) << k;
  }
  EXPECT_EQ(j["fit"]["peak_bytes"], g["device_total_bytes"]);
  EXPECT_EQ(j["fit"]["figure"], "device total");
  // totals.peak_bytes stays the ledger's live bytes.
  EXPECT_LT(j["totals"]["peak_bytes"].get<std::int64_t>(),
            g["peak_allocated_bytes"].get<std::int64_t>() + 1);
}

TEST(GpuCli, TheCudaRuntimeChoosesTheContextRow) {
  // An A100 on CUDA 11.7 (lazy): PR #86509's 287 MB; on the default runtime (12.8) the Ada row;
  // each with the 240 MiB of kernels a training step loads.
  const auto context = [](const std::string& extra) {
    const CliRun r = cli("estimate qwen3-0.6b --gpu a100-80gb --json" + extra,
                         "env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF");
    EXPECT_EQ(r.code, 0) << r.out;
    return nlohmann::json::parse(r.out)["gpu"]["context_bytes"].get<std::int64_t>();
  };
  EXPECT_EQ(context(" --versions cuda=11.7"), 287'000'000 + 240 * MiB);
  EXPECT_EQ(context(""), 666 * MiB);
}

TEST(GpuCli, ValidatePricesAGpuRowOnTheDeviceAndRuntimeItRecorded) {
  // validation/data/gpu-measured.jsonl records measured.cuda_context {device_name: "NVIDIA H200",
  // cuda: "13.0"} and no device_id: the nvidia-smi row is priced as reserved + Hopper's context.
  const std::string data = std::string(TRAINMEM_SOURCE_DIR) + "/validation/data/gpu-measured.jsonl";
  const CliRun r = cli("validate " + data + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, std::int64_t> predicted;
  const auto report = nlohmann::json::parse(r.out);
  for (const auto& row : report["per_row"]) {
    predicted[row["id"].get<std::string>()] = row["predicted_peak_bytes"].get<std::int64_t>();
  }
  const std::string id = "qwen3-0.6b_full_adamw-foreach_bf16_ckpt-none_sdpa_b2_s512";
  ASSERT_TRUE(predicted.count(id + "_device") && predicted.count(id + "_reserved"));
  EXPECT_EQ(predicted[id + "_device"] - predicted[id + "_reserved"], 804'061'184);
}

TEST(GpuCli, AllocConfFromFlagOrEnvironment) {
  const auto flag = nlohmann::json::parse(
      cli("estimate qwen3-0.6b --json --alloc-conf expandable_segments:True").out);
  EXPECT_EQ(flag["gpu"]["alloc_conf"], "expandable_segments:True");
  const auto env = nlohmann::json::parse(
      cli("estimate qwen3-0.6b --json",
          "env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128")
          .out);
  EXPECT_EQ(env["gpu"]["alloc_conf"], "max_split_size_mb:128");
  const CliRun bad = cli("estimate qwen3-0.6b",
                         "env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:5");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("PYTORCH_CUDA_ALLOC_CONF: 'max_split_size_mb'"), std::string::npos)
      << bad.out;
  const CliRun bad_flag = cli("estimate qwen3-0.6b --alloc-conf foo:1");
  EXPECT_EQ(bad_flag.code, 1);
  EXPECT_NE(bad_flag.out.find("--alloc-conf: 'foo': unknown key"), std::string::npos)
      << bad_flag.out;
  // The flag wins over the environment, as a later setting does.
  const auto both = nlohmann::json::parse(
      cli("estimate qwen3-0.6b --json --alloc-conf expandable_segments:True",
          "env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128")
          .out);
  EXPECT_EQ(both["gpu"]["alloc_conf"], "expandable_segments:True");
  // PYTORCH_ALLOC_CONF, the name PyTorch reads first since 2.9, wins over the older one; a
  // malformed one is named.
  const auto generic = nlohmann::json::parse(cli("estimate qwen3-0.6b --json",
                                                 "PYTORCH_ALLOC_CONF=expandable_segments:True "
                                                 "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128")
                                                 .out);
  EXPECT_EQ(generic["gpu"]["alloc_conf"], "expandable_segments:True");
  // The report names the settings replayed, not one variable's name: it may have come from
  // either, or from the flag.
  const CliRun text =
      cli("estimate qwen3-0.6b",
          "env -u PYTORCH_CUDA_ALLOC_CONF PYTORCH_ALLOC_CONF=expandable_segments:True");
  EXPECT_NE(text.out.find("allocator settings: expandable_segments:True)"), std::string::npos)
      << text.out;
  const CliRun defaults =
      cli("estimate qwen3-0.6b", "env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_ALLOC_CONF");
  EXPECT_NE(defaults.out.find("allocator settings: the defaults)"), std::string::npos)
      << defaults.out;
  const CliRun bad_generic =
      cli("estimate qwen3-0.6b", "PYTORCH_ALLOC_CONF=large_segment_size_mb:8");
  EXPECT_EQ(bad_generic.code, 1);
  EXPECT_NE(bad_generic.out.find("PYTORCH_ALLOC_CONF: 'large_segment_size_mb': too small"),
            std::string::npos)
      << bad_generic.out;
}

// solve, advise and sweep judge with the same allocator configuration as estimate: from the
// environment, or the flag; a malformed one is an error naming where it came from.
TEST(GpuCli, EveryCommandReadsTheAllocatorConfiguration) {
  const std::string solve =
      "solve qwen3-1.7b --method lora --precision bf16 --seq 1024 --for max-batch --gpu rtx-4090 "
      "--json";
  const auto plain =
      nlohmann::json::parse(cli(solve, "env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF").out);
  const auto env = nlohmann::json::parse(
      cli(solve, "env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True").out);
  const auto flag =
      nlohmann::json::parse(cli(solve + " --alloc-conf expandable_segments:True",
                                "env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF")
                                .out);
  EXPECT_EQ(env["peak_bytes"], flag["peak_bytes"]);
  EXPECT_LT(env["peak_bytes"].get<std::int64_t>(), plain["peak_bytes"].get<std::int64_t>());
  for (const char* command :
       {"solve qwen3-0.6b --for max-batch --gpu rtx-4090", "advise qwen3-0.6b --gpu rtx-4090",
        "sweep qwen3-0.6b --over batch --values 1,2 --gpu rtx-4090"}) {
    const CliRun bad =
        cli(command, "env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF=expandable_segments:Maybe");
    EXPECT_EQ(bad.code, 1) << command;
    EXPECT_NE(bad.out.find("PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments'"), std::string::npos)
        << command << ": " << bad.out;
  }
}

TEST(GpuCli, TextReportAndEventTimeline) {
  const CliRun text = cli("estimate qwen3-0.6b --timeline events",
                          "env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF");
  ASSERT_EQ(text.code, 0) << text.out;
  for (const char* s :
       {"Peak allocated", "max_memory_allocated", "Peak reserved", "max_memory_reserved",
        "Device total", "nvidia-smi", "Allocation events through two steps",
        "weights (one per parameter", "optimizer state (zeros_like"}) {
    EXPECT_NE(text.out.find(s), std::string::npos) << s;
  }
  EXPECT_NE(cli("estimate qwen3-0.6b --timeline").out.find("Memory through one step"),
            std::string::npos);
  EXPECT_EQ(cli("estimate qwen3-0.6b --timeline sideways").code, 2);
  // The segments the reserved line names are the configuration's.
  EXPECT_NE(text.out.find("segments (2 MiB, 20 MiB, or the request rounded to 2 MiB)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(
      cli("estimate qwen3-0.6b --alloc-conf expandable_segments:True,large_segment_size_mb:64")
          .out.find("segments (pages of 2 MiB and 64 MiB mapped into one segment per pool)"),
      std::string::npos);
}

// --timeline events --json: the stream in a traced loop's schema, which replays (as
// bench/replay_trace.cpp replays a trace) to the report's figures, phase by phase.
TEST(GpuCli, JsonEventsReplayToTheReportsFigures) {
  const CliRun r = cli(
      "estimate qwen3-0.6b --gpu h100 --checkpointing full --alloc-conf expandable_segments:True "
      "--timeline events --json",
      "env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("alloc_events"));
  auto trace = gpu::parse_alloc_trace(j["alloc_events"].dump(), "alloc_events");
  ASSERT_TRUE(trace) << trace.error().message();
  ASSERT_EQ(trace->phases.size(), static_cast<std::size_t>(kPhaseSlots));
  EXPECT_EQ(j["alloc_events"]["what"]["0"], "weights (one per parameter tensor)");
  auto conf = gpu::parse_alloc_conf("expandable_segments:True", "--alloc-conf");
  ASSERT_TRUE(conf);
  const gpu::ReplayResult replayed = gpu::replay(trace->events, *conf, {}, kPhaseSlots);
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    const auto& phase = j["gpu"]["by_phase"][slot_name(slot)];
    const gpu::PhaseStats& p = replayed.phases[static_cast<std::size_t>(slot)];
    EXPECT_EQ(p.allocated_bytes, phase["allocated_bytes"].get<std::int64_t>()) << slot_name(slot);
    EXPECT_EQ(p.reserved_bytes, phase["reserved_bytes"].get<std::int64_t>()) << slot_name(slot);
  }
  EXPECT_EQ(replayed.peak_reserved_bytes, j["gpu"]["peak_reserved_bytes"].get<std::int64_t>());
  // --timeline phases --json: the phase timeline the web page draws.
  const auto phases = nlohmann::json::parse(cli("estimate qwen3-0.6b --timeline --json").out);
  EXPECT_EQ(phases["timeline"]["schema"], "trainmem.timeline/1");
  EXPECT_FALSE(phases.contains("alloc_events"));
}

}  // namespace
}  // namespace trainmem

namespace trainmem {
namespace {

TEST(GpuCli, AppleUnifiedMemoryHasNoCudaFigures) {
  const CliRun r = cli("estimate qwen3-0.6b --gpu m2-max-32gb");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("On the GPU"), std::string::npos);
  EXPECT_NE(r.out.find("  Peak "), std::string::npos);  // the verdict on live bytes
  const auto j = nlohmann::json::parse(cli("estimate qwen3-0.6b --gpu m2-max-32gb --json").out);
  EXPECT_FALSE(j.contains("gpu"));
  EXPECT_EQ(j["fit"]["figure"], "peak");
}

}  // namespace
}  // namespace trainmem

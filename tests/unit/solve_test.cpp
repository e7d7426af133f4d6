// Solvers are exact against estimate(): the answer fits and the next step up does not.
#include "trainmem/solve.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

LoadedModel model_or_die(const char* name) {
  auto m = load_preset(name);
  EXPECT_TRUE(m) << name;
  return m.value();
}

TrainingPlan lora_plan() {
  TrainingPlan p;
  p.method = Method::lora;
  p.checkpointing = Checkpointing::full;
  return p;
}

TEST(Solve, MaxBatchIsExact) {
  const LoadedModel m = model_or_die("qwen3-1.7b");
  const Device gpu = *find_device("rtx-4090");
  const auto r = solve(m, lora_plan(), gpu, SolveFor::max_batch);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->found);
  ASSERT_GE(r->answer, 1);
  TrainingPlan at = lora_plan();
  at.batch = r->answer;
  // Judged as `trainmem estimate` judges a CUDA card: on the device total.
  EXPECT_EQ(r->figure, "device total");
  EXPECT_TRUE(judge(m, at, gpu).fits);
  EXPECT_EQ(judge(m, at, gpu).peak_bytes, r->peak_bytes);
  EXPECT_GT(r->peak_bytes, peak_of(m, at)) << "the device total holds more than live tensors";
  at.batch = r->answer + 1;
  EXPECT_FALSE(judge(m, at, gpu).fits);
  EXPECT_EQ(judge(m, at, gpu).peak_bytes, r->next_peak_bytes);
  EXPECT_EQ(r->next, r->answer + 1);
}

TEST(Solve, MaxSeqIsExactAtEveryStep) {
  const LoadedModel m = model_or_die("qwen3-1.7b");
  const Device gpu = *find_device("l4");
  for (std::int64_t step : {1, 64}) {
    SolveOptions o;
    o.step = step;
    const auto r = solve(m, lora_plan(), gpu, SolveFor::max_seq, o);
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->found);
    EXPECT_EQ(r->answer % step, 0);
    TrainingPlan at = lora_plan();
    at.seq = r->answer;
    EXPECT_TRUE(judge(m, at, gpu).fits);
    at.seq = r->answer + step;
    EXPECT_FALSE(judge(m, at, gpu).fits);
  }
}

TEST(Solve, MoreMemoryNeverLowersTheAnswer) {
  const LoadedModel m = model_or_die("qwen3-1.7b");
  std::int64_t last = 0;
  for (const char* id : {"l4", "rtx-4090", "a100-40gb", "a100-80gb", "h200"}) {
    const auto r = solve(m, lora_plan(), *find_device(id), SolveFor::max_batch);
    ASSERT_TRUE(r);
    EXPECT_GE(r->answer, last) << id;
    last = r->answer;
  }
}

TEST(Solve, NothingFitsAnswersZero) {
  const LoadedModel m = model_or_die("qwen3-8b");
  const auto r = solve(m, TrainingPlan{}, *find_device("rtx-3060-12gb"), SolveFor::max_batch);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->found);
  EXPECT_EQ(r->answer, 0);
  EXPECT_GT(r->peak_bytes, find_device("rtx-3060-12gb")->usable_bytes());
  EXPECT_FALSE(r->notes.empty());
}

TEST(Solve, MaxBatchNeedsADevice) {
  const LoadedModel m = model_or_die("qwen3-0.6b");
  const auto r = solve(m, TrainingPlan{}, std::nullopt, SolveFor::max_batch);
  ASSERT_FALSE(r);
  // The library names its own field; the command line turns it into --gpu.
  EXPECT_EQ(r.error().code, ErrorCode::bad_input);
  EXPECT_EQ(r.error().field, "device");
}

TEST(Solve, SmallestGpuIsExact) {
  const LoadedModel m = model_or_die("qwen3-4b");
  const TrainingPlan plan = lora_plan();
  const auto r = solve(m, plan, std::nullopt, SolveFor::smallest_gpu);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->found);
  ASSERT_TRUE(r->device);
  EXPECT_EQ(r->device->kind, DeviceKind::gpu);
  EXPECT_TRUE(r->device->bf16) << "bf16 plans skip emulated-bf16 GPUs";
  const std::int64_t peak = peak_of(m, plan);
  EXPECT_LE(peak, r->device->usable_bytes());
  // Every native-bf16 GPU with less usable memory does not fit.
  for (const Device& d : list_devices()) {
    if (d.kind != DeviceKind::gpu || !d.bf16) continue;
    if (d.usable_bytes() < r->device->usable_bytes()) {
      EXPECT_GT(peak, d.usable_bytes()) << d.id;
    }
  }
  if (r->next_smaller) {
    EXPECT_GT(peak, r->next_smaller->usable_bytes());
  }
}

TEST(Solve, SmallestTierIsExactAndHonoursReserve) {
  const LoadedModel m = model_or_die("qwen3-8b");
  TrainingPlan plan;
  plan.method = Method::qlora;
  const auto r = solve(m, plan, std::nullopt, SolveFor::smallest_tier);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->found);
  EXPECT_EQ(r->device->kind, DeviceKind::tier);
  EXPECT_LE(r->peak_bytes, r->device->usable_bytes());
  if (r->next_smaller) {
    EXPECT_GT(r->peak_bytes, r->next_smaller->usable_bytes());
  }
  // A larger reserve never picks a smaller tier.
  SolveOptions o;
  o.reserve_bytes = 8 * kGB;
  const auto big = solve(m, plan, std::nullopt, SolveFor::smallest_tier, o);
  ASSERT_TRUE(big);
  if (big->found) {
    EXPECT_GE(big->device->capacity_bytes, r->device->capacity_bytes);
  }
}

TEST(Solve, NoDeviceHoldsAHugeRun) {
  const LoadedModel m = model_or_die("deepseek-v3");
  const auto r = solve(m, TrainingPlan{}, std::nullopt, SolveFor::smallest_gpu);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->found);
  EXPECT_FALSE(r->device);
}

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun cli(const std::string& args) {
  const std::string cmd = std::string(TRAINMEM_CLI) + " " + args + " 2>/dev/null";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(Solve, CliJsonContract) {
  const CliRun batch =
      cli("solve Qwen/Qwen3-8B --gpu rtx-4090 --method lora --checkpointing full --for max-batch "
          "--json");
  ASSERT_EQ(batch.code, 0) << batch.out;
  const auto j = nlohmann::json::parse(batch.out);
  EXPECT_EQ(j.at("schema"), "trainmem.solve/1");
  EXPECT_EQ(j.at("for"), "max-batch");
  ASSERT_TRUE(j.at("answer").is_number_integer());
  EXPECT_GE(j.at("answer").get<std::int64_t>(), 1);
  EXPECT_LE(j.at("peak_bytes").get<std::int64_t>(), j.at("usable_bytes").get<std::int64_t>());
  EXPECT_GT(j.at("next_peak_bytes").get<std::int64_t>(), j.at("usable_bytes").get<std::int64_t>());

  const CliRun gpu = cli("solve qwen3-1.7b --method lora --for smallest-gpu --json");
  ASSERT_EQ(gpu.code, 0) << gpu.out;
  const auto g = nlohmann::json::parse(gpu.out);
  ASSERT_TRUE(g.at("answer").is_string());
  EXPECT_TRUE(find_device(g.at("answer").get<std::string>()));

  // Nothing fits: answer 0 and exit 3.
  const CliRun none = cli("solve qwen3-8b --gpu rtx-3060-12gb --for max-batch --json");
  EXPECT_EQ(none.code, 3);
  EXPECT_EQ(nlohmann::json::parse(none.out).at("answer"), 0);
  EXPECT_FALSE(nlohmann::json::parse(none.out).at("fits").get<bool>());
  // A device is needed for max-batch; a bad --for is a usage error.
  EXPECT_EQ(cli("solve qwen3-8b --for max-batch").code, 2);
  EXPECT_EQ(cli("solve qwen3-8b --gpu l4 --for biggest").code, 2);
}

TEST(Solve, CliGpusAndSweepJson) {
  const CliRun gpus = cli("gpus --json");
  ASSERT_EQ(gpus.code, 0);
  const auto d = nlohmann::json::parse(gpus.out);
  EXPECT_EQ(d.at("devices").size(), list_devices().size());
  const CliRun tiers = cli("gpus --kind tier --json");
  EXPECT_EQ(nlohmann::json::parse(tiers.out).at("devices").size(), 7U);

  const CliRun both = cli("sweep qwen3-0.6b --gpu t4 --over both --json");
  ASSERT_EQ(both.code, 0);
  const auto s = nlohmann::json::parse(both.out);
  ASSERT_EQ(s.at("sweeps").size(), 2U);
  EXPECT_EQ(s.at("sweeps")[0].at("over"), "batch");
  EXPECT_EQ(s.at("sweeps")[1].at("over"), "seq");
  const CliRun one = cli("sweep qwen3-0.6b --over seq --values 512,1024 --json");
  ASSERT_EQ(one.code, 0);
  EXPECT_EQ(nlohmann::json::parse(one.out).at("points").size(), 2U);
}

TEST(Solve, Names) {
  for (SolveFor f :
       {SolveFor::max_batch, SolveFor::max_seq, SolveFor::smallest_gpu, SolveFor::smallest_tier}) {
    EXPECT_EQ(parse_solve_for(name_of(f)), f);
  }
  EXPECT_FALSE(parse_solve_for("max_batch"));
}

}  // namespace
}  // namespace trainmem

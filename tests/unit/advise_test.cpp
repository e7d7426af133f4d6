// Advice that really fits: every option is re-estimated, and its flags re-run through the CLI.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/estimate.h"
#include "trainmem/model.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"

namespace trainmem {
namespace {

std::string capture(const std::string& args) {
  const std::string cmd = std::string(TRAINMEM_CLI) + " " + args + " 2>/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(Advise, EveryOptionIsPricedByTheEstimator) {
  const auto m = load_preset("qwen3-8b");
  ASSERT_TRUE(m);
  const Device gpu = *find_device("rtx-4090");
  const Advice a = advise(m.value(), TrainingPlan{}, gpu);
  EXPECT_FALSE(a.fits_now);
  ASSERT_FALSE(a.options.empty());
  bool seen_not_fitting = false;
  for (const AdviceOption& o : a.options) {
    SCOPED_TRACE(o.change);
    EXPECT_FALSE(o.change.empty());
    EXPECT_FALSE(o.flags.empty());
    EXPECT_FALSE(o.cost.empty());
    EXPECT_FALSE(validate(o.plan).has_value());
    // Judged as `trainmem estimate` judges the card: on the device total.
    const Fit f = judge(m.value(), o.plan, gpu);
    EXPECT_EQ(f.figure, "device total");
    EXPECT_EQ(f.peak_bytes, o.peak_bytes);
    EXPECT_EQ(o.fits, f.fits);
    EXPECT_LT(o.peak_bytes, a.now.peak_bytes) << "every option lowers the peak";
    // Fitting options come first.
    if (!o.fits) seen_not_fitting = true;
    if (seen_not_fitting) {
      EXPECT_FALSE(o.fits);
    }
  }
  EXPECT_TRUE(a.options.front().fits) << "some change makes Qwen3-8B fit a 4090";
  // Cheapest first among the fitting ones.
  for (std::size_t i = 1; i < a.options.size() && a.options[i].fits; ++i) {
    EXPECT_LE(a.options[i - 1].cost_rank, a.options[i].cost_rank);
  }
}

TEST(Advise, ReducesBatchKeepingTheEffectiveBatch) {
  const auto m = load_preset("qwen3-1.7b");
  ASSERT_TRUE(m);
  TrainingPlan plan;
  plan.method = Method::lora;
  plan.batch = 16;
  plan.seq = 2048;
  const Device gpu = *find_device("rtx-4090");
  const Advice a = advise(m.value(), plan, gpu);
  ASSERT_FALSE(a.fits_now);
  bool found = false;
  for (const AdviceOption& o : a.options) {
    if (o.plan.batch != plan.batch) {
      found = true;
      EXPECT_EQ(o.plan.batch * o.plan.grad_accum, plan.batch * plan.grad_accum) << o.change;
    }
  }
  EXPECT_TRUE(found);
}

TEST(Advise, CombinationsAreMinimal) {
  const auto m = load_preset("qwen3-8b");
  ASSERT_TRUE(m);
  const Device gpu = *find_device("rtx-4090");
  const Advice a = advise(m.value(), TrainingPlan{}, gpu);
  for (const AdviceOption& o : a.options) {
    if (o.parts < 2 || !o.fits) continue;
    // No single change in the combination fits on its own.
    for (const AdviceOption& s : a.options) {
      if (s.parts == 1 && s.fits) {
        EXPECT_EQ((" " + o.flags + " ").find(" " + s.flags + " "), std::string::npos) << o.flags;
      }
    }
  }
}

// Each option's flags on top of the plan price what advise printed: also a LoRA plan's QLoRA
// option (the LoRA default's bf16 base stays in its flags) and a plan across GPUs (judged on the
// most-loaded rank, as estimate judges it; it was priced on one GPU).
TEST(Advise, FlagsReproduceThePeakThroughTheCli) {
  for (const std::string base :
       {"Qwen/Qwen3-8B --gpu rtx-4090",
        "qwen3-8b --method lora --gpu rtx-3060-12gb --batch 1 --seq 512 --checkpointing full",
        "qwen2.5-3b --gpus 4 --gpu a100-40gb --batch 4 --seq 2048"}) {
    SCOPED_TRACE(base);
    const auto doc = nlohmann::json::parse(capture("advise " + base + " --json"));
    EXPECT_EQ(doc.at("schema"), "trainmem.advice/1");
    EXPECT_FALSE(doc.at("fits_now").get<bool>());
    ASSERT_FALSE(doc.at("options").empty());
    for (const auto& o : doc.at("options")) {
      const std::string flags = o.at("flags").get<std::string>();
      SCOPED_TRACE(flags);
      const auto est = nlohmann::json::parse(capture("estimate " + base + " " + flags + " --json"));
      EXPECT_EQ(est.at("fit").at("peak_bytes"), o.at("peak_bytes"));
      EXPECT_EQ(est.at("fit").at("fits"), o.at("fits"));
    }
  }
}

// mlx-lm on an Apple machine: no CUDA allocator setting, Liger/TRL loss, bitsandbytes optimizer
// or multi-GPU layout is offered, only what mlx-lm itself can change.
TEST(Advise, MlxOnAMacOffersOnlyWhatMlxRuns) {
  const auto doc = nlohmann::json::parse(
      capture("advise llama-3.2-3b --method lora --framework mlx --batch 4 --seq 1024 "
              "--gpu m2-max-32gb --json"));
  ASSERT_FALSE(doc.at("options").empty());
  for (const auto& o : doc.at("options")) {
    const std::string flags = o.at("flags").get<std::string>();
    for (const char* cuda_only : {"--alloc-conf", "--loss", "--optimizer", "--zero", "--fsdp",
                                  "--gpus", "--optimizer-impl"}) {
      EXPECT_EQ(flags.find(cuda_only), std::string::npos) << flags;
    }
  }
}

// Expandable segments are offered unless the plan's allocator already has them, added to what
// the plan sets.
TEST(Advise, OffersExpandableSegmentsOnTopOfThePlansConfiguration) {
  const auto m = load_preset("qwen3-8b");
  ASSERT_TRUE(m);
  const Device card = *find_device("rtx-4090");
  auto flags_of = [&](const std::string& conf) {
    TrainingPlan plan;
    plan.alloc_conf = conf;
    std::vector<std::string> out;
    for (const AdviceOption& o : advise(m.value(), plan, card).options) {
      if (o.flags.find("--alloc-conf") != std::string::npos) out.push_back(o.flags);
    }
    return out;
  };
  const std::vector<std::string> plain = flags_of("");
  ASSERT_FALSE(plain.empty());
  EXPECT_NE(std::find(plain.begin(), plain.end(), "--alloc-conf expandable_segments:True"),
            plain.end());
  const std::vector<std::string> split = flags_of("garbage_collection_threshold:0.6");
  EXPECT_NE(std::find(split.begin(), split.end(),
                      "--alloc-conf garbage_collection_threshold:0.6,expandable_segments:True"),
            split.end());
  EXPECT_TRUE(flags_of("expandable_segments:True").empty());
}

TEST(Advise, AFittingPlanSaysSo) {
  const auto m = load_preset("qwen3-0.6b");
  ASSERT_TRUE(m);
  TrainingPlan plan;
  plan.method = Method::qlora;
  const Advice a = advise(m.value(), plan, *find_device("h200"));
  EXPECT_TRUE(a.fits_now);
  for (const AdviceOption& o : a.options) EXPECT_TRUE(o.fits);
}

}  // namespace
}  // namespace trainmem

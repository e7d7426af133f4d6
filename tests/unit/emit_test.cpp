// emit -> import round trips: every format reads back into the same layout and the same
// per-rank peak; files that cannot be read give one-line errors naming file and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "support/models.h"
#include "trainmem/distributed.h"
#include "trainmem/import.h"

namespace trainmem {
namespace {

using testing_support::load_or_fail;

void expect_round_trip(EmitFormat format, const LoadedModel& m, const TrainingPlan& plan) {
  auto text = emit_config(format, m, plan);
  ASSERT_TRUE(text) << text.error().message();
  EXPECT_EQ(text.value().find("\"auto\""), std::string::npos) << text.value();
  EXPECT_EQ(text.value().find(": auto\n"), std::string::npos) << text.value();
  TrainingPlan base;  // defaults: what the file must restore
  auto back = import_config("emitted", text.value(), base, plan.layout.gpus_per_node);
  ASSERT_TRUE(back) << back.error().message() << "\n" << text.value();
  const Layout& a = plan.layout;
  const Layout& b = back.value().layout;
  EXPECT_EQ(describe(a), describe(b)) << text.value();
  if (format != EmitFormat::accelerate_fsdp) {
    EXPECT_EQ(back.value().grad_accum, plan.grad_accum);
  }
  const auto peak = [&](const TrainingPlan& p) {
    const DistributedEstimate d = estimate_distributed(m, p);
    return d.ranks[d.most_loaded].totals.peak_bytes;
  };
  TrainingPlan priced = back.value();
  // The sequence length belongs to the training script in DeepSpeed JSON and accelerate YAML
  // (and batch and accumulation too in accelerate's): --seq/--batch/--grad-accum supply them.
  if (format == EmitFormat::deepspeed || format == EmitFormat::accelerate_fsdp) {
    priced.seq = plan.seq;
  }
  if (format == EmitFormat::accelerate_fsdp) {
    priced.batch = plan.batch;
    priced.grad_accum = plan.grad_accum;
  }
  EXPECT_EQ(peak(priced), peak(plan)) << name_of(format);
}

TrainingPlan base_plan() {
  TrainingPlan p;
  p.batch = 2;
  p.seq = 2048;
  p.grad_accum = 4;
  p.layout.gpus_per_node = 8;
  p.layout.nodes = 2;
  return p;
}

TEST(EmitRoundTrip, DeepSpeedEveryStageAndOffload) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  for (int z = 0; z <= 3; ++z) {
    TrainingPlan p = base_plan();
    p.layout.engine = Engine::deepspeed;
    p.layout.zero_stage = z;
    expect_round_trip(EmitFormat::deepspeed, m, p);
  }
  TrainingPlan p = base_plan();
  p.layout.engine = Engine::deepspeed;
  p.layout.zero_stage = 3;
  p.layout.offload_optimizer = p.layout.offload_params = true;
  p.layout.deepspeed.reduce_bucket_size = 16'777'216;
  expect_round_trip(EmitFormat::deepspeed, m, p);
}

// The emitted DeepSpeed config runs the precision the plan was priced in: the HF Trainer's bf16
// (autocast) and DeepSpeed's bf16 turn its bf16 engine on, fp16 its fp16 engine, fp32 neither;
// stage3_max_reuse_distance is DeepSpeed's default, whatever max_live_parameters is. Read back,
// both engines off sets no precision: DeepSpeed then trains in the dtype the script loads (a
// pure-bf16 LoRA plan, the LoRA default, emits both off and was read back as fp32).
TEST(EmitRoundTrip, DeepSpeedStatesThePlansPrecision) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = base_plan();
  p.layout.engine = Engine::deepspeed;
  p.layout.zero_stage = 3;
  p.layout.deepspeed.stage3_max_live_parameters = 123;
  const std::vector<std::tuple<Precision, bool, bool>> cases{
      {Precision::autocast_bf16, true, false},
      {Precision::bf16_mixed, true, false},
      {Precision::autocast_fp16, false, true},
      {Precision::fp16_mixed, false, true},
      {Precision::fp32, false, false}};
  for (const auto& [precision, bf16, fp16] : cases) {
    p.precision = precision;
    auto text = emit_config(EmitFormat::deepspeed, m, p);
    ASSERT_TRUE(text) << text.error().message();
    const auto j = nlohmann::json::parse(text.value());
    EXPECT_EQ(j["bf16"]["enabled"], bf16) << name_of(precision);
    EXPECT_EQ(j["fp16"]["enabled"], fp16) << name_of(precision);
    EXPECT_EQ(j["zero_optimization"]["stage3_max_reuse_distance"], 1'000'000'000);
    EXPECT_EQ(j["zero_optimization"]["stage3_max_live_parameters"], 123);
  }
  auto fp32 = import_config_text(
      R"({"bf16": {"enabled": false}, "fp16": {"enabled": false}, "zero_optimization": {"stage": 3}})",
      "ds_fp32.json");
  ASSERT_TRUE(fp32) << fp32.error().message();
  const auto setting = std::find_if(fp32->patch.begin(), fp32->patch.end(),
                                    [](const PlanSetting& s) { return s.key == "precision"; });
  EXPECT_EQ(setting, fp32->patch.end());
  EXPECT_TRUE(std::any_of(fp32->used.begin(), fp32->used.end(), [](const std::string& u) {
    return u.find("the dtype the model is loaded in") != std::string::npos;
  }));
}

TEST(EmitRoundTrip, AccelerateFsdp1And2) {
  const LoadedModel m = load_or_fail("qwen3-8b");
  for (FsdpMode mode : {FsdpMode::full, FsdpMode::grad_op, FsdpMode::hybrid, FsdpMode::none}) {
    TrainingPlan p = base_plan();
    p.layout.engine = Engine::fsdp;
    p.layout.fsdp = mode;
    p.layout.fsdp_version = 1;
    expect_round_trip(EmitFormat::accelerate_fsdp, m, p);
  }
  TrainingPlan p = base_plan();
  p.layout.engine = Engine::fsdp;
  p.layout.offload_optimizer = p.layout.offload_params = true;
  p.checkpointing = Checkpointing::full;
  expect_round_trip(EmitFormat::accelerate_fsdp, m, p);
  p.layout.fsdp = FsdpMode::hybrid;  // FSDP2 HSDP is not in accelerate's YAML
  EXPECT_FALSE(emit_config(EmitFormat::accelerate_fsdp, m, p));
}

TEST(EmitRoundTrip, Fsdp2TorchtitanWithModelParallel) {
  const LoadedModel m = load_or_fail("llama-3.1-70b");
  TrainingPlan p = base_plan();
  p.layout.engine = Engine::fsdp;
  // torchtitan shards the embedding and [norm, lm_head] as units of their own: a plan that says
  // so round-trips; one that does not is told in the file's header.
  auto text = emit_config(EmitFormat::fsdp2, m, p);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("--custom-sharded-layers tok_embeddings,output"), std::string::npos);
  p.layout.fsdp_knobs.embedding_unit = p.layout.fsdp_knobs.head_unit = true;
  expect_round_trip(EmitFormat::fsdp2, m, p);
  text = emit_config(EmitFormat::fsdp2, m, p);
  ASSERT_TRUE(text);
  EXPECT_EQ(text->find("--custom-sharded-layers"), std::string::npos);
  p.layout.tp = 4;
  p.layout.sequence_parallel = true;
  p.layout.pp = 2;
  p.checkpointing = Checkpointing::full;
  expect_round_trip(EmitFormat::fsdp2, m, p);
  p.layout.fsdp = FsdpMode::hybrid;
  expect_round_trip(EmitFormat::fsdp2, m, p);
}

// The torchrun script states the plan's precision (the HF Trainer's --bf16 autocasts over fp32
// weights; with TRL's --torch_dtype bfloat16 the step is pure bf16) and a LoRA or QLoRA plan's
// PEFT arguments (TRL ModelConfig): read back, each prices the same rank (a LoRA plan read back
// as a full fine-tune, --bf16 as bf16-fp32-master).
TEST(EmitRoundTrip, TorchrunDdpAndMegatron) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan ddp = base_plan();
  ddp.checkpointing = Checkpointing::full;
  for (Precision precision :
       {Precision::autocast_bf16, Precision::bf16, Precision::autocast_fp16}) {
    ddp.precision = precision;
    expect_round_trip(EmitFormat::torchrun, m, ddp);
  }
  TrainingPlan lora = ddp;
  lora.precision = Precision::bf16;
  lora.method = Method::lora;
  lora.lora.rank = 32;
  lora.lora.dropout = 0.05;
  lora.lora.targets = {"q", "v"};
  expect_round_trip(EmitFormat::torchrun, m, lora);
  lora.method = Method::qlora;
  lora.quant.double_quant = false;
  expect_round_trip(EmitFormat::torchrun, m, lora);
  TrainingPlan mg = base_plan();
  mg.layout.engine = Engine::megatron;
  mg.layout.tp = 2;
  mg.layout.sequence_parallel = true;
  mg.layout.pp = 4;
  mg.layout.virtual_stages = 2;
  mg.layout.distributed_optimizer = true;
  mg.checkpointing = Checkpointing::selective;
  expect_round_trip(EmitFormat::megatron, m, mg);
}

// A launch script sets the allocator configuration the plan was priced with, and reads back.
TEST(EmitRoundTrip, LaunchScriptsCarryTheAllocatorConfiguration) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan ddp = base_plan();
  ddp.alloc_conf = "expandable_segments:True";
  auto text = emit_config(EmitFormat::torchrun, m, ddp);
  ASSERT_TRUE(text) << text.error().message();
  EXPECT_NE(text->find("\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"),
            std::string::npos)
      << *text;
  auto back = import_config("launch.sh", *text, TrainingPlan{}, 8);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->alloc_conf, "expandable_segments:True");
  // A malformed one names the variable and the file.
  auto bad = import_config(
      "launch.sh",
      "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:5\ntorchrun --nnodes 1 --nproc_per_node 2 "
      "train.py --per_device_train_batch_size 1\n",
      TrainingPlan{}, 2);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().file, "launch.sh");
  EXPECT_EQ(bad.error().field, "PYTORCH_CUDA_ALLOC_CONF");
  // PYTORCH_ALLOC_CONF, which PyTorch reads first, wins wherever it stands in the script.
  auto generic =
      import_config("launch.sh",
                    "export PYTORCH_ALLOC_CONF=expandable_segments:True\n"
                    "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\ntorchrun --nnodes 1 "
                    "--nproc_per_node 2 train.py --per_device_train_batch_size 1\n",
                    TrainingPlan{}, 2);
  ASSERT_TRUE(generic) << generic.error().message();
  EXPECT_EQ(generic->alloc_conf, "expandable_segments:True");
  // The last assignment of a name stands, as in the shell; the one it replaced is never read.
  auto last =
      import_config("launch.sh",
                    "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:5\n"
                    "export PYTORCH_CUDA_ALLOC_CONF='max_split_size_mb:128'\ntorchrun "
                    "--nnodes 1 --nproc_per_node 2 train.py --per_device_train_batch_size 1\n",
                    TrainingPlan{}, 2);
  ASSERT_TRUE(last) << last.error().message();
  EXPECT_EQ(last->alloc_conf, "max_split_size_mb:128");
}

// "auto" is the HF Trainer's to fill in (transformers integrations/deepspeed.py): the plan's
// micro-batch, accumulation and precision stay, and the world is the flags' GPUs.
TEST(EmitImport, DeepSpeedAutoKeepsThePlanAndTheFlagsGpus) {
  TrainingPlan base;
  base.batch = 3;
  base.grad_accum = 2;
  base.precision = Precision::bf16;
  base.layout.gpus_per_node = 4;
  base.layout.nodes = 2;
  auto p = import_config("ds.json",
                         R"({"zero_optimization": {"stage": 3, "offload_optimizer":
                              {"device": "cpu", "pin_memory": "auto"}},
                             "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"},
                             "train_micro_batch_size_per_gpu": "auto",
                             "gradient_accumulation_steps": "auto",
                             "train_batch_size": "auto"})",
                         base, 4);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->batch, 3);
  EXPECT_EQ(p->grad_accum, 2);
  EXPECT_EQ(p->precision, Precision::bf16);
  EXPECT_EQ(p->layout.engine, Engine::deepspeed);
  EXPECT_EQ(p->layout.zero_stage, 3);
  EXPECT_TRUE(p->layout.offload_optimizer);
  EXPECT_FALSE(p->layout.pin_memory);
  EXPECT_EQ(p->layout.gpus_per_node, 4);
  EXPECT_EQ(p->layout.nodes, 2);
  // A concrete global batch still sets the world: 48 / (3 x 2) = 8 GPUs.
  auto global = import_config("ds.json", R"({"train_batch_size": 48})", base, 4);
  ASSERT_TRUE(global) << global.error().message();
  EXPECT_EQ(global->layout.gpus_per_node * global->layout.nodes, 8);
}

TEST(EmitErrors, WrongEngineAndBadFiles) {
  const LoadedModel m = load_or_fail("llama-3.1-8b");
  TrainingPlan p = base_plan();
  p.layout.engine = Engine::fsdp;
  auto e = emit_config(EmitFormat::deepspeed, m, p);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().reason.find("FSDP2 FULL_SHARD"), std::string::npos) << e.error().reason;
  auto bad =
      import_config("ds.json", R"({"train_micro_batch_size_per_gpu": "two"})", TrainingPlan{}, 0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(),
            "ds.json: train_micro_batch_size_per_gpu: 'two' is not a number");
  auto enabled =
      import_config("ds.json", R"({"zero_optimization": {"stage": 2}, "bf16": {"enabled": "yes"}})",
                    TrainingPlan{}, 0);
  ASSERT_FALSE(enabled);
  EXPECT_EQ(enabled.error().field, "bf16.enabled");
  auto stage =
      import_config("ds.json", R"({"zero_optimization": {"stage": 5}})", TrainingPlan{}, 0);
  ASSERT_FALSE(stage);
  EXPECT_EQ(stage.error().field, "zero_optimization.stage");
  auto yaml = import_config("a.yaml", "distributed_type: FSDP\nnum_processes: 3\nnum_machines: 2\n",
                            TrainingPlan{}, 0);
  ASSERT_FALSE(yaml);
  EXPECT_EQ(yaml.error().field, "num_processes");
  auto xla =
      import_config("a.yaml", "distributed_type: XLA\nnum_processes: 8\n", TrainingPlan{}, 0);
  ASSERT_FALSE(xla);
  EXPECT_EQ(xla.error().field, "distributed_type");
  auto zero =
      import_config("a.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 4\n",
                    TrainingPlan{}, 0);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().field, "deepspeed_config.zero_stage");
  EXPECT_FALSE(import_config("x.txt", "hello", TrainingPlan{}, 0));
}

}  // namespace
}  // namespace trainmem

// Emitters: one function per format. Every number the estimate depends on is written explicitly,
// with the engine defaults trainmem assumed (research/distributed.md section 4).
#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "trainmem/distributed.h"

namespace trainmem {
namespace {

constexpr std::array<std::pair<EmitFormat, std::string_view>, 5> kFormats{
    {{EmitFormat::deepspeed, "deepspeed"},
     {EmitFormat::accelerate_fsdp, "accelerate-fsdp"},
     {EmitFormat::fsdp2, "fsdp2"},
     {EmitFormat::torchrun, "torchrun"},
     {EmitFormat::megatron, "megatron"}}};

Error wrong_engine(EmitFormat f, const Layout& l, std::string_view needs) {
  return Error{
      ErrorCode::usage, "", "emit",
      fmt::format("{} writes {}; the plan's layout is {}", name_of(f), needs, describe(l))};
}

// The decoder layer class FSDP wraps (transformers modeling_<family>.py).
std::string layer_class(const ModelSpec& s) {
  const std::string& t = s.model_type;
  if (t == "llama") return "LlamaDecoderLayer";
  if (t == "qwen2") return "Qwen2DecoderLayer";
  if (t == "qwen3") return "Qwen3DecoderLayer";
  if (t == "qwen3_moe") return "Qwen3MoeDecoderLayer";
  if (t == "mistral") return "MistralDecoderLayer";
  if (t == "mixtral") return "MixtralDecoderLayer";
  if (t == "gemma2") return "Gemma2DecoderLayer";
  if (t == "gemma3_text" || t == "gemma3") return "Gemma3DecoderLayer";
  if (t == "phi3") return "Phi3DecoderLayer";
  if (t == "gpt2") return "GPT2Block";
  if (t == "deepseek_v3") return "DeepseekV3DecoderLayer";
  return "DecoderLayer";
}

std::string_view precision_word(Precision p) {
  switch (p) {
    case Precision::bf16_mixed:
    case Precision::bf16:
    case Precision::autocast_bf16:
      return "bf16";
    case Precision::fp16_mixed:
    case Precision::autocast_fp16:
      return "fp16";
    case Precision::fp32:
      return "no";
  }
  return "no";
}

std::string header(const char* comment, const TrainingPlan& plan, const LoadedModel& model) {
  std::string out = fmt::format(
      "{} trainmem plan for {}: {}; micro-batch {} x {} tokens, {} micro-batches "
      "per step\n",
      comment, model.spec.name, describe(plan.layout), plan.batch, plan.seq, plan.grad_accum);
  if (!plan.alloc_conf.empty()) {
    out +=
        fmt::format("{} priced with PYTORCH_CUDA_ALLOC_CONF={}: set it in the run's environment\n",
                    comment, plan.alloc_conf);
  }
  return out;
}

// The launch scripts set the allocator configuration the plan was priced with; PyTorch reads it
// at the first CUDA allocation, so it is exported before torchrun starts the ranks.
std::string launch_environment(const TrainingPlan& plan) {
  if (plan.alloc_conf.empty()) return "";
  return fmt::format("export PYTORCH_CUDA_ALLOC_CONF={}\n", plan.alloc_conf);
}

// DeepSpeed's own precision: its bf16 (BF16_Optimizer) and fp16 engines keep 16-bit weights and
// an fp32 master copy, which is how the layout prices a DeepSpeed plan in either mixed
// precision; the HF Trainer's autocast (bf16=True, "auto" in the config) turns the same engine on
// (transformers integrations/deepspeed.py trainer_config_process). fp32 and pure bf16 leave both
// off.
bool deepspeed_bf16(Precision p) {
  return p == Precision::bf16_mixed || p == Precision::autocast_bf16;
}
bool deepspeed_fp16(Precision p) {
  return p == Precision::fp16_mixed || p == Precision::autocast_fp16;
}
// deepspeed/runtime/zero/config.py max_reuse_distance (stage3_max_reuse_distance) default 1e9
// (DeepSpeed @edaa72212, :244); trainmem does not price it, so the file states the default.
constexpr std::int64_t kStage3MaxReuseDistance = 1'000'000'000;

Result<std::string> deepspeed(const LoadedModel&, const TrainingPlan& p) {
  const Layout& l = p.layout;
  if (l.engine != Engine::deepspeed) {
    return wrong_engine(EmitFormat::deepspeed, l, "DeepSpeed ZeRO (--zero 0..3)");
  }
  if (l.tp > 1 || l.pp > 1 || l.cp > 1 || l.ep > 1) {
    return Error{ErrorCode::usage, "", "emit",
                 "deepspeed: trainmem prices ZeRO data parallelism only; use megatron for TP/PP"};
  }
  const DeepSpeedKnobs& d = l.deepspeed;
  auto device = [&](bool on) {
    nlohmann::json j = {{"device", on ? name_of(l.offload_to) : "none"}};
    if (on) j["pin_memory"] = l.pin_memory;
    if (on && l.offload_to == OffloadTarget::nvme) j["nvme_path"] = "/local_nvme";
    return j;
  };
  nlohmann::json zero = {{"stage", l.zero_stage},
                         {"overlap_comm", overlap_comm(l)},
                         {"contiguous_gradients", d.contiguous_gradients},
                         {"reduce_bucket_size", d.reduce_bucket_size},
                         {"allgather_bucket_size", d.allgather_bucket_size},
                         {"sub_group_size", d.sub_group_size},
                         {"offload_optimizer", device(l.offload_optimizer)}};
  if (l.zero_stage == 3) {
    zero["stage3_prefetch_bucket_size"] = d.stage3_prefetch_bucket_size;
    zero["stage3_param_persistence_threshold"] = d.stage3_param_persistence_threshold;
    zero["stage3_max_live_parameters"] = d.stage3_max_live_parameters;
    zero["stage3_max_reuse_distance"] = kStage3MaxReuseDistance;
    zero["offload_param"] = device(l.offload_params);
    zero["stage3_gather_16bit_weights_on_model_save"] = true;
  }
  const nlohmann::json j = {{"train_micro_batch_size_per_gpu", p.batch},
                            {"gradient_accumulation_steps", p.grad_accum},
                            {"train_batch_size", p.batch * p.grad_accum * data_parallel_size(l)},
                            {"gradient_clipping", 1.0},
                            {"bf16", {{"enabled", deepspeed_bf16(p.precision)}}},
                            {"fp16", {{"enabled", deepspeed_fp16(p.precision)}}},
                            {"zero_optimization", zero}};
  return j.dump(2) + "\n";
}

Result<std::string> accelerate(const LoadedModel& model, const TrainingPlan& p) {
  const Layout& l = p.layout;
  if (l.engine != Engine::fsdp) {
    return wrong_engine(EmitFormat::accelerate_fsdp, l, "FSDP (--fsdp)");
  }
  if (l.tp > 1 || l.pp > 1 || l.cp > 1 || l.ep > 1) {
    return Error{ErrorCode::usage, "", "emit",
                 "accelerate-fsdp: data parallel only here; use fsdp2 (torchtitan) for TP/PP/CP"};
  }
  if (l.fsdp_version == 2 && (l.fsdp == FsdpMode::hybrid || l.fsdp == FsdpMode::none)) {
    return Error{ErrorCode::usage, "", "--fsdp-version",
                 "accelerate's FSDP2 config has only reshard_after_forward true/false: use "
                 "--fsdp-version 1 for HYBRID_SHARD/NO_SHARD, or emit fsdp2"};
  }
  std::string out = header("#", p, model);
  out += "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\n";
  out += fmt::format("mixed_precision: {}\n", precision_word(p.precision));
  out +=
      fmt::format("num_machines: {}\nnum_processes: {}\nmachine_rank: 0\n", l.nodes, world_size(l));
  out += "fsdp_config:\n";
  out += fmt::format("  fsdp_version: {}\n", l.fsdp_version);
  if (l.fsdp_version == 2) {
    out += fmt::format("  fsdp_reshard_after_forward: {}\n",
                       l.fsdp == FsdpMode::full ? "true" : "false");
  } else {
    std::string_view s = "FULL_SHARD";
    switch (l.fsdp) {
      case FsdpMode::full:
        s = "FULL_SHARD";
        break;
      case FsdpMode::grad_op:
        s = "SHARD_GRAD_OP";
        break;
      case FsdpMode::hybrid:
        s = "HYBRID_SHARD";
        break;
      case FsdpMode::none:
        s = "NO_SHARD";
        break;
    }
    out += fmt::format("  fsdp_sharding_strategy: {}\n", s);
    out += fmt::format("  fsdp_backward_prefetch: {}\n",
                       l.fsdp_knobs.backward_prefetch ? "BACKWARD_PRE" : "NO_PREFETCH");
    out += fmt::format("  fsdp_forward_prefetch: {}\n", l.fsdp_knobs.forward_prefetch);
    out += "  fsdp_use_orig_params: true\n  fsdp_sync_module_states: true\n";
  }
  out += fmt::format("  fsdp_offload_params: {}\n", l.offload_params);
  out += "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n";
  out += fmt::format("  fsdp_transformer_layer_cls_to_wrap: {}\n", layer_class(model.spec));
  out +=
      fmt::format("  fsdp_activation_checkpointing: {}\n", p.checkpointing == Checkpointing::full);
  out +=
      fmt::format("  fsdp_cpu_ram_efficient_loading: {}\n", l.fsdp_knobs.cpu_ram_efficient_loading);
  out += "  fsdp_state_dict_type: SHARDED_STATE_DICT\n";
  out += fmt::format(
      "# training script: --per_device_train_batch_size {} "
      "--gradient_accumulation_steps {} --max_seq_length {}\n",
      p.batch, p.grad_accum, p.seq);
  return out;
}

Result<std::string> torchtitan(const LoadedModel& model, const TrainingPlan& p) {
  const Layout& l = p.layout;
  if (l.engine != Engine::fsdp) return wrong_engine(EmitFormat::fsdp2, l, "FSDP2 (--fsdp)");
  if (l.fsdp_version != 2) {
    return Error{ErrorCode::usage, "", "--fsdp-version",
                 "fsdp2 writes FSDP2: use --fsdp-version 2"};
  }
  if (l.fsdp == FsdpMode::none) {
    return Error{ErrorCode::usage, "", "--fsdp", "torchtitan has no NO_SHARD: use full or grad-op"};
  }
  if (l.tp > 1 && !l.sequence_parallel) {
    return Error{ErrorCode::usage, "", "--sequence-parallel",
                 "torchtitan's tensor parallelism is always sequence parallel: add "
                 "--sequence-parallel"};
  }
  if (l.offload_optimizer != l.offload_params) {
    return Error{ErrorCode::usage, "", "--offload", "FSDP2 offloads both or nothing"};
  }
  const std::int64_t replicate = l.fsdp == FsdpMode::hybrid ? l.nodes : 1;
  std::string out = header("#", p, model);
  if (!(l.fsdp_knobs.embedding_unit && l.fsdp_knobs.head_unit)) {
    // torchtitan always makes them units of their own (src/io/import/dist/torchtitan.cpp), so
    // reading this file back prices that, not the plan as given.
    out +=
        "# torchtitan shards the embedding and [norm, lm_head] as units of their own; this plan "
        "was priced\n# with them in the root (--custom-sharded-layers tok_embeddings,output prices "
        "torchtitan's layout)\n";
  }
  out += "[training]\n";
  out += fmt::format("local_batch_size = {}\nseq_len = {}\n", p.batch, p.seq);
  out += fmt::format("global_batch_size = {}\n", p.batch * p.grad_accum * data_parallel_size(l));
  out += fmt::format("mixed_precision_param = \"{}\"\n",
                     p.precision == Precision::fp32 ? "float32" : "bfloat16");
  out += "mixed_precision_reduce = \"float32\"\n";
  out += fmt::format("enable_cpu_offload = {}\n", l.offload_params);
  out += "\n[parallelism]\n";
  out += fmt::format("data_parallel_replicate_degree = {}\n", replicate);
  out += fmt::format("data_parallel_shard_degree = {}\n", shard_group_size(l));
  out += fmt::format("fsdp_reshard_after_forward = \"{}\"\n",
                     l.fsdp == FsdpMode::grad_op ? "never" : "default");
  out += fmt::format("tensor_parallel_degree = {}\n", l.tp);
  out += fmt::format("pipeline_parallel_degree = {}\n", l.pp);
  out += fmt::format("context_parallel_degree = {}\n", l.cp);
  out += fmt::format("expert_parallel_degree = {}\n", l.ep);
  out += "\n[activation_checkpoint]\n";
  out += fmt::format("mode = \"{}\"\n", name_of(p.checkpointing));
  return out;
}

// TRL ModelConfig's PEFT and bitsandbytes arguments for a LoRA or QLoRA plan (trl/trainer/
// model_config.py: use_peft, lora_r, lora_alpha, lora_dropout, lora_target_modules,
// load_in_4bit, bnb_4bit_quant_type, use_bnb_nested_quant); the targets by PEFT's module names.
std::string lora_arguments(const TrainingPlan& p) {
  if (p.method != Method::lora && p.method != Method::qlora) return "";
  std::string out =
      fmt::format(" \\\n  --use_peft --lora_r {} --lora_alpha {:g} --lora_dropout {:g}",
                  p.lora.rank, p.lora.alpha, p.lora.dropout);
  out += " --lora_target_modules";
  for (const std::string& t : p.lora.targets) {
    const Term* term = find_term(lora_target_vocabulary(), t);
    out += " " + (term != nullptr && !term->aliases.empty() ? term->aliases.front() : t);
  }
  if (p.method == Method::qlora) {
    out += p.quant.kind == QuantKind::int8
               ? std::string(" --load_in_8bit")
               : fmt::format(" --load_in_4bit --bnb_4bit_quant_type {}{}", name_of(p.quant.kind),
                             p.quant.double_quant ? " --use_bnb_nested_quant" : "");
  }
  return out;
}

Result<std::string> torchrun(const LoadedModel& model, const TrainingPlan& p) {
  const Layout& l = p.layout;
  if (l.engine != Engine::ddp)
    return wrong_engine(EmitFormat::torchrun, l, "DDP (no --zero/--fsdp)");
  std::string out = "#!/usr/bin/env bash\n" + header("#", p, model) + launch_environment(p);
  out += fmt::format("torchrun --nnodes {} --nproc_per_node {} train.py \\\n", l.nodes,
                     l.gpus_per_node);
  out += fmt::format("  --model_name_or_path {} \\\n", model.spec.name);
  out += fmt::format("  --per_device_train_batch_size {} --gradient_accumulation_steps {} \\\n",
                     p.batch, p.grad_accum);
  out += fmt::format("  --max_seq_length {} --ddp_bucket_cap_mb {:g}", p.seq, l.ddp_bucket_cap_mb);
  // The HF Trainer's bf16/fp16 autocast over the weights as loaded: fp32 unless --torch_dtype
  // (TRL ModelConfig) loads them in 16 bits, which is a pure bf16 plan.
  if (p.precision == Precision::bf16_mixed || p.precision == Precision::autocast_bf16 ||
      p.precision == Precision::bf16)
    out += " --bf16";
  if (p.precision == Precision::fp16_mixed || p.precision == Precision::autocast_fp16)
    out += " --fp16";
  if (p.precision == Precision::bf16) out += " --torch_dtype bfloat16";
  if (p.checkpointing == Checkpointing::full) out += " --gradient_checkpointing";
  out += lora_arguments(p);
  out += "\n";
  return out;
}

Result<std::string> megatron(const LoadedModel& model, const TrainingPlan& p) {
  const Layout& l = p.layout;
  if (l.engine != Engine::megatron) {
    return wrong_engine(EmitFormat::megatron, l,
                        "Megatron-LM (--tp/--pp or --distributed-optimizer)");
  }
  const ModelSpec& s = model.spec;
  std::string out = "#!/usr/bin/env bash\n" + header("#", p, model) + launch_environment(p);
  out += fmt::format("torchrun --nnodes {} --nproc_per_node {} pretrain_gpt.py \\\n", l.nodes,
                     l.gpus_per_node);
  out += fmt::format("  --tensor-model-parallel-size {} --pipeline-model-parallel-size {} \\\n",
                     l.tp, l.pp);
  if (l.virtual_stages > 1) {
    out += fmt::format("  --num-layers-per-virtual-pipeline-stage {} \\\n",
                       s.layers / (l.pp * l.virtual_stages));
  }
  out +=
      fmt::format("  --context-parallel-size {} --expert-model-parallel-size {} \\\n", l.cp, l.ep);
  if (l.sequence_parallel) out += "  --sequence-parallel \\\n";
  if (l.distributed_optimizer) out += "  --use-distributed-optimizer \\\n";
  if (l.offload_optimizer) out += "  --optimizer-cpu-offload \\\n";
  out += fmt::format("  --micro-batch-size {} --global-batch-size {} --seq-length {} \\\n", p.batch,
                     p.batch * p.grad_accum * data_parallel_size(l), p.seq);
  out += fmt::format(
      "  --num-layers {} --hidden-size {} --ffn-hidden-size {} "
      "--num-attention-heads {} \\\n",
      s.layers, s.hidden, s.intermediate, s.heads);
  if (s.kv_heads != s.heads) {
    out += fmt::format("  --group-query-attention --num-query-groups {} \\\n", s.kv_heads);
  }
  if (s.moe.experts > 0) {
    out += fmt::format("  --num-experts {} --moe-router-topk {} \\\n", s.moe.experts, s.moe.top_k);
  }
  if (p.checkpointing != Checkpointing::none) {
    out += fmt::format("  --recompute-granularity {} {}\\\n", name_of(p.checkpointing),
                       p.checkpointing == Checkpointing::full
                           ? "--recompute-method uniform --recompute-num-layers 1 "
                           : "");
  }
  out += fmt::format("  --{}\n", p.precision == Precision::fp16_mixed ? "fp16" : "bf16");
  return out;
}

}  // namespace

std::string_view name_of(EmitFormat f) {
  for (const auto& [e, n] : kFormats) {
    if (e == f) return n;
  }
  return "";
}

std::optional<EmitFormat> parse_emit_format(std::string_view s) {
  for (const auto& [e, n] : kFormats) {
    if (n == s) return e;
  }
  return std::nullopt;
}

Result<std::string> emit_config(EmitFormat format, const LoadedModel& model,
                                const TrainingPlan& plan) {
  switch (format) {
    case EmitFormat::deepspeed:
      return deepspeed(model, plan);
    case EmitFormat::accelerate_fsdp:
      return accelerate(model, plan);
    case EmitFormat::fsdp2:
      return torchtitan(model, plan);
    case EmitFormat::torchrun:
      return torchrun(model, plan);
    case EmitFormat::megatron:
      return megatron(model, plan);
  }
  return Error{ErrorCode::usage, "", "emit", "unknown format"};
}

}  // namespace trainmem

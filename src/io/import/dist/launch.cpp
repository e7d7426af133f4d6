// Launch scripts: torchrun + HF Trainer arguments (DDP), or torchrun + Megatron-LM
// pretrain_gpt.py arguments (megatron/training/arguments.py names).
#include <fmt/format.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gpu/caching_allocator.h"
#include "io/import/dist/importers.h"
#include "plan/plan.h"
#include "trainmem/device.h"

namespace trainmem::import {
namespace {

Result<std::int64_t> int_flag(const std::string& file, const std::vector<std::string>& w,
                              const std::string& flag, std::int64_t fallback) {
  if (auto v = flag_value(w, flag)) return as_int(file, flag, *v);
  return fallback;
}

// TRL ModelConfig's PEFT and bitsandbytes arguments (trl/trainer/model_config.py), as
// emit torchrun writes them: --use_peft, --lora_r/alpha/dropout, --lora_target_modules NAMES...,
// --load_in_4bit/--load_in_8bit, --bnb_4bit_quant_type, --use_bnb_nested_quant.
std::optional<Error> read_peft_arguments(const std::string& file, const std::vector<std::string>& w,
                                         TrainingPlan& p) {
  if (!has_flag(w, "--use_peft")) return std::nullopt;
  p.method =
      has_flag(w, "--load_in_4bit") || has_flag(w, "--load_in_8bit") ? Method::qlora : Method::lora;
  auto rank = int_flag(file, w, "--lora_r", p.lora.rank);
  if (!rank) return rank.error();
  p.lora.rank = rank.value();
  for (const auto& [flag, target] : {std::pair<const char*, double*>{"--lora_alpha", &p.lora.alpha},
                                     {"--lora_dropout", &p.lora.dropout}}) {
    if (auto v = flag_value(w, flag)) {
      try {
        *target = std::stod(*v);
      } catch (const std::exception&) {
        return bad_input(file, flag, fmt::format("'{}' is not a number", *v));
      }
    }
  }
  const auto at = std::find(w.begin(), w.end(), "--lora_target_modules");
  if (at != w.end()) {
    p.lora.targets.clear();
    for (auto it = at + 1; it != w.end() && !it->starts_with("-") && *it != "\\"; ++it) {
      const Term* term = find_term(lora_target_vocabulary(), *it);
      if (term == nullptr) {
        return bad_input(file, "--lora_target_modules",
                         fmt::format("'{}' is not a module trainmem prices", *it));
      }
      p.lora.targets.push_back(term->name);
    }
  }
  if (has_flag(w, "--load_in_8bit")) p.quant.kind = QuantKind::int8;
  if (auto kind = flag_value(w, "--bnb_4bit_quant_type")) {
    if (*kind != "nf4" && *kind != "fp4") {
      return bad_input(file, "--bnb_4bit_quant_type", fmt::format("'{}' is not nf4 or fp4", *kind));
    }
    p.quant.kind = *kind == "nf4" ? QuantKind::nf4 : QuantKind::fp4;
  }
  if (p.method == Method::qlora) p.quant.double_quant = has_flag(w, "--use_bnb_nested_quant");
  return std::nullopt;
}

}  // namespace

Result<TrainingPlan> from_launch(const std::string& file, const std::vector<std::string>& w,
                                 TrainingPlan p) {
  Layout l;
  auto nodes = int_flag(file, w, "--nnodes", 1);
  if (!nodes) return nodes.error();
  auto per_node = int_flag(file, w, "--nproc_per_node", 1);
  if (!per_node) return per_node.error();
  l.nodes = nodes.value();
  l.gpus_per_node = per_node.value();
  const bool megatron = has_flag(w, "--tensor-model-parallel-size") ||
                        has_flag(w, "--micro-batch-size") ||
                        has_flag(w, "--use-distributed-optimizer");
  if (megatron) {
    l.engine = Engine::megatron;
    for (const auto& [flag, target] :
         {std::pair<const char*, std::int64_t*>{"--tensor-model-parallel-size", &l.tp},
          {"--pipeline-model-parallel-size", &l.pp},
          {"--context-parallel-size", &l.cp},
          {"--expert-model-parallel-size", &l.ep}}) {
      auto v = int_flag(file, w, flag, 1);
      if (!v) return v.error();
      *target = v.value();
    }
    l.sequence_parallel = has_flag(w, "--sequence-parallel");
    l.distributed_optimizer = has_flag(w, "--use-distributed-optimizer");
    l.offload_optimizer = has_flag(w, "--optimizer-cpu-offload");
    auto layers_per_chunk = int_flag(file, w, "--num-layers-per-virtual-pipeline-stage", 0);
    if (!layers_per_chunk) return layers_per_chunk.error();
    auto layers = int_flag(file, w, "--num-layers", 0);
    if (!layers) return layers.error();
    if (layers_per_chunk.value() > 0 && layers.value() > 0) {
      l.virtual_stages = layers.value() / (l.pp * layers_per_chunk.value());
    }
    auto micro = int_flag(file, w, "--micro-batch-size", p.batch);
    if (!micro) return micro.error();
    auto seq = int_flag(file, w, "--seq-length", p.seq);
    if (!seq) return seq.error();
    p.batch = micro.value();
    p.seq = seq.value();
    const std::int64_t mp = l.tp * l.pp * l.cp;
    const std::int64_t dp = mp > 0 ? l.nodes * l.gpus_per_node / mp : 1;
    auto global = int_flag(file, w, "--global-batch-size", p.batch * dp * p.grad_accum);
    if (!global) return global.error();
    if (dp < 1 || p.batch < 1 || global.value() % (p.batch * dp) != 0) {
      return bad_input(file, "--global-batch-size",
                       "is not micro-batch x data-parallel x micro-batches");
    }
    p.grad_accum = global.value() / (p.batch * dp);
    if (auto g = flag_value(w, "--recompute-granularity")) {
      auto ck = parse_checkpointing(*g);
      if (!ck)
        return bad_input(file, "--recompute-granularity",
                         fmt::format("'{}' is not full or selective", *g));
      p.checkpointing = *ck;
    }
    if (has_flag(w, "--fp16")) p.precision = Precision::fp16_mixed;
    if (has_flag(w, "--bf16")) p.precision = Precision::bf16_mixed;
  } else {
    l.engine = Engine::ddp;
    auto micro = int_flag(file, w, "--per_device_train_batch_size", p.batch);
    if (!micro) return micro.error();
    auto ga = int_flag(file, w, "--gradient_accumulation_steps", p.grad_accum);
    if (!ga) return ga.error();
    auto seq = int_flag(file, w, "--max_seq_length", p.seq);
    if (!seq) return seq.error();
    p.batch = micro.value();
    p.grad_accum = ga.value();
    p.seq = seq.value();
    if (auto cap = flag_value(w, "--ddp_bucket_cap_mb")) {
      try {
        l.ddp_bucket_cap_mb = std::stod(*cap);
      } catch (const std::exception&) {
        return bad_input(file, "--ddp_bucket_cap_mb", fmt::format("'{}' is not a number", *cap));
      }
    }
    if (has_flag(w, "--gradient_checkpointing")) p.checkpointing = Checkpointing::full;
    // The HF Trainer's --bf16/--fp16 autocast over the weights as loaded (fp32), unless TRL's
    // --torch_dtype loads them in bf16: then the whole step is bf16.
    const auto dtype = flag_value(w, "--torch_dtype");
    if (has_flag(w, "--bf16")) {
      p.precision = dtype == "bfloat16" ? Precision::bf16 : Precision::autocast_bf16;
    }
    if (has_flag(w, "--fp16")) p.precision = Precision::autocast_fp16;
    if (auto e = read_peft_arguments(file, w, p)) return *e;
  }
  // `export PYTORCH_CUDA_ALLOC_CONF=...` (as emit writes it, or VAR=... before torchrun): the
  // allocator the ranks run with. The script's assignments are the ranks' environment, read as
  // PyTorch reads it (alloc_conf_from_environment: PYTORCH_ALLOC_CONF first); the last
  // assignment of a name is the one that stands.
  std::map<std::string, std::string, std::less<>> assigned;
  for (const std::string& word : w) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    std::string value = word.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    assigned[word.substr(0, eq)] = std::move(value);
  }
  const auto conf = alloc_conf_from_environment([&](const char* name) -> const char* {
    const auto it = assigned.find(std::string_view(name));
    return it == assigned.end() ? nullptr : it->second.c_str();
  });
  if (conf) {
    auto c = gpu::parse_alloc_conf(conf->value, conf->name);
    if (!c) return bad_input(file, conf->name, c.error().reason);
    p.alloc_conf = conf->value;
  }
  p.layout = l;
  return p;
}

}  // namespace trainmem::import

// ds_config.json: ZeRO stage, buckets, offload, batch and accumulation. The world size is
// train_batch_size / (micro-batch x accumulation) (docs/_pages/config-json.md batch identity).
// "auto" is what the HF Trainer fills in from its TrainingArguments and the launcher's world size
// (transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig.trainer_config_process): it
// keeps the plan's value, and an "auto" or absent train_batch_size keeps the flags' GPUs.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "io/import/dist/importers.h"
#include "io/json_parse.h"

namespace trainmem::import {
namespace {

bool is_auto(const nlohmann::json& v) {
  return v.is_string() && v.get<std::string>() == "auto";
}

Result<std::int64_t> int_at(const std::string& file, const nlohmann::json& j, const char* key,
                            std::int64_t fallback) {
  if (!j.contains(key) || is_auto(j.at(key))) return fallback;
  const auto& v = j.at(key);
  if (v.is_string()) {
    return bad_input(file, key, fmt::format("'{}' is not a number", v.get<std::string>()));
  }
  if (!v.is_number_integer() && !v.is_number_float())
    return bad_input(file, key, "is not a number");
  return as_int(file, key, fmt::format("{}", v.get<double>()));
}

// A boolean field of a section (bf16.enabled, offload_optimizer.pin_memory): nullopt when the
// section or the field is absent or "auto". `path` is the section's dotted name in the file.
Result<std::optional<bool>> flag_at(const std::string& file, const nlohmann::json& j,
                                    const std::string& section, const char* key,
                                    const std::string& path) {
  if (!j.contains(section) || !j.at(section).is_object()) return std::optional<bool>{};
  const nlohmann::json& s = j.at(section);
  if (!s.contains(key) || is_auto(s.at(key))) return std::optional<bool>{};
  if (!s.at(key).is_boolean()) {
    return bad_input(file, path + "." + key, "is not true, false or \"auto\"");
  }
  return std::optional<bool>{s.at(key).get<bool>()};
}

}  // namespace

Result<TrainingPlan> from_deepspeed(const std::string& file, const std::string& text,
                                    TrainingPlan p, std::int64_t gpus_per_node) {
  auto parsed = io::parse_json(text, file);  // depth cap, 1e400, syntax: one-line errors
  if (!parsed) return parsed.error();
  const nlohmann::json& j = parsed.value();
  if (!j.is_object() || !(j.contains("zero_optimization") || j.contains("train_batch_size") ||
                          j.contains("train_micro_batch_size_per_gpu"))) {
    // Any other JSON object would otherwise be read as "ZeRO 0, nothing set" without a word.
    return bad_input(file, "",
                     "not a DeepSpeed config: none of zero_optimization, train_batch_size, "
                     "train_micro_batch_size_per_gpu");
  }
  const nlohmann::json zero = j.value("zero_optimization", nlohmann::json::object());
  Layout l;
  l.engine = Engine::deepspeed;
  auto stage = int_at(file, zero, "stage", 0);
  if (!stage) return stage.error();
  if (stage.value() > 3) return bad_input(file, "zero_optimization.stage", "must be 0..3");
  l.zero_stage = static_cast<int>(stage.value());
  auto micro = int_at(file, j, "train_micro_batch_size_per_gpu", p.batch);
  if (!micro) return micro.error();
  auto ga = int_at(file, j, "gradient_accumulation_steps", p.grad_accum);
  if (!ga) return ga.error();
  if (micro.value() < 1 || ga.value() < 1) {
    return bad_input(file, "train_micro_batch_size_per_gpu", "batch and accumulation must be >= 1");
  }
  p.batch = micro.value();
  p.grad_accum = ga.value();
  const std::int64_t flags_world = p.layout.gpus_per_node * p.layout.nodes;
  auto global = int_at(file, j, "train_batch_size", p.batch * p.grad_accum * flags_world);
  if (!global) return global.error();
  if (global.value() % (p.batch * p.grad_accum) != 0) {
    return bad_input(file, "train_batch_size",
                     "is not micro-batch x accumulation x GPUs for a whole number of GPUs");
  }
  place(l, global.value() / (p.batch * p.grad_accum), gpus_per_node);
  struct Field {
    const char* key;
    std::int64_t* target;
  };
  for (const Field& f :
       {Field{"reduce_bucket_size", &l.deepspeed.reduce_bucket_size},
        Field{"allgather_bucket_size", &l.deepspeed.allgather_bucket_size},
        Field{"sub_group_size", &l.deepspeed.sub_group_size},
        Field{"stage3_prefetch_bucket_size", &l.deepspeed.stage3_prefetch_bucket_size},
        Field{"stage3_param_persistence_threshold",
              &l.deepspeed.stage3_param_persistence_threshold},
        Field{"stage3_max_live_parameters", &l.deepspeed.stage3_max_live_parameters}}) {
    auto v = int_at(file, zero, f.key, *f.target);
    if (!v) return v.error();
    *f.target = v.value();
  }
  if (zero.contains("overlap_comm") && zero["overlap_comm"].is_boolean()) {
    l.deepspeed.overlap_comm = zero["overlap_comm"].get<bool>();
  }
  if (zero.contains("contiguous_gradients") && zero["contiguous_gradients"].is_boolean()) {
    l.deepspeed.contiguous_gradients = zero["contiguous_gradients"].get<bool>();
  }
  for (const char* key : {"offload_optimizer", "offload_param"}) {
    if (!zero.contains(key) || !zero[key].is_object()) continue;
    const std::string field = fmt::format("zero_optimization.{}.device", key);
    const nlohmann::json& device_json = zero[key].value("device", nlohmann::json("none"));
    if (!device_json.is_string()) return bad_input(file, field, "is not a string");
    const std::string device = device_json.get<std::string>();
    if (auto e =
            set_offload_device(file, field, device, std::string(key) == "offload_optimizer", l)) {
      return *e;
    }
    if (device == "none") continue;
    auto pin = flag_at(file, zero, key, "pin_memory", fmt::format("zero_optimization.{}", key));
    if (!pin) return pin.error();
    l.pin_memory = pin.value().value_or(false);
  }
  for (const auto& [section, precision] :
       {std::pair{"bf16", Precision::bf16_mixed}, std::pair{"fp16", Precision::fp16_mixed}}) {
    auto enabled = flag_at(file, j, section, "enabled", section);
    if (!enabled) return enabled.error();
    if (enabled.value().value_or(false)) p.precision = precision;
  }
  p.layout = l;
  return p;
}

}  // namespace trainmem::import

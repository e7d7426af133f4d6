// The plan as JSON: every TrainingPlan field under its own snake_case name, so a plan written by
// render_plan_json() reads back through plan_from_json() unchanged (docs/formats.md, "plan").
#include <nlohmann/json.hpp>

#include "plan/framework.h"
#include "render/json.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

nlohmann::json knob_json(const KnobInfo& k, std::int64_t v) {
  switch (k.kind) {
    case KnobKind::flag:
      return v != 0;
    case KnobKind::count:
      return v;
    case KnobKind::load_quantiser:
      return name_of(static_cast<LoadQuantiser>(v));
  }
  return v;
}

// The knobs where the plan differs from its framework profile's behaviour (the switches a user
// turned on, such as padding_mask): plan_from_json applies the profile, then these.
nlohmann::json behaviour_overrides(const TrainingPlan& p) {
  TrainingPlan profile = p;
  apply_framework(profile);
  nlohmann::json out = nlohmann::json::object();
  for (const KnobInfo& k : knobs()) {
    const std::int64_t v = k.get(p.behaviour);
    if (v != k.get(profile.behaviour)) out[std::string(k.name)] = knob_json(k, v);
  }
  return out;
}

}  // namespace

nlohmann::json layout_json(const Layout& l) {
  const DeepSpeedKnobs& ds = l.deepspeed;
  const FsdpKnobs& f = l.fsdp_knobs;
  return {{"engine", name_of(l.engine)},
          {"gpus_per_node", l.gpus_per_node},
          {"nodes", l.nodes},
          {"zero_stage", l.zero_stage},
          {"fsdp", name_of(l.fsdp)},
          {"fsdp_version", l.fsdp_version},
          {"tp", l.tp},
          {"sequence_parallel", l.sequence_parallel},
          {"pp", l.pp},
          {"virtual_stages", l.virtual_stages},
          {"cp", l.cp},
          {"ep", l.ep},
          {"distributed_optimizer", l.distributed_optimizer},
          {"offload_optimizer", l.offload_optimizer},
          {"offload_params", l.offload_params},
          {"offload_to", name_of(l.offload_to)},
          {"pin_memory", l.pin_memory},
          {"ddp_bucket_cap_mb", l.ddp_bucket_cap_mb},
          {"gradient_as_bucket_view", l.gradient_as_bucket_view},
          {"deepspeed",
           {{"reduce_bucket_size", ds.reduce_bucket_size},
            {"allgather_bucket_size", ds.allgather_bucket_size},
            {"overlap_comm", ds.overlap_comm ? nlohmann::json(*ds.overlap_comm) : nullptr},
            {"contiguous_gradients", ds.contiguous_gradients},
            {"sub_group_size", ds.sub_group_size},
            {"stage3_prefetch_bucket_size", ds.stage3_prefetch_bucket_size},
            {"stage3_param_persistence_threshold", ds.stage3_param_persistence_threshold},
            {"stage3_max_live_parameters", ds.stage3_max_live_parameters},
            {"zero_init", ds.zero_init}}},
          {"fsdp_knobs",
           {{"limit_all_gathers", f.limit_all_gathers},
            {"backward_prefetch", f.backward_prefetch},
            {"forward_prefetch", f.forward_prefetch},
            {"cpu_ram_efficient_loading", f.cpu_ram_efficient_loading},
            {"embedding_unit", f.embedding_unit},
            {"head_unit", f.head_unit}}}};
}

nlohmann::json plan_json(const TrainingPlan& p) {
  nlohmann::json j = {
      {"method", name_of(p.method)},
      {"precision", name_of(p.precision)},
      {"optimizer", name_of(p.optimizer)},
      {"optimizer_impl", name_of(p.optimizer_impl)},
      {"batch", p.batch},
      {"seq", p.seq},
      {"grad_accum", p.grad_accum},
      {"checkpointing", name_of(p.checkpointing)},
      {"attention", name_of(p.attention)},
      {"loss", name_of(p.loss)},
      {"framework", p.framework},
      {"convention", name_of(p.convention)},
      {"params_override", p.params_override},
      {"lora",
       {{"rank", p.lora.rank},
        {"alpha", p.lora.alpha},
        {"dropout", p.lora.dropout},
        {"targets", p.lora.targets},
        {"dora", p.lora.dora}}},
      {"quant",
       {{"kind", name_of(p.quant.kind)},
        {"double_quant", p.quant.double_quant},
        {"block_size", p.quant.block_size},
        {"prepare_kbit", p.quant.prepare_kbit}}},
      {"freeze",
       {{"train_modules", p.freeze.train_modules}, {"train_layers", p.freeze.train_layers}}}};
  // The evaluation settings appear once either leaves the Trainer's default (no evaluation, batch
  // 8), so plans without evaluation print as they always have; a missing key reads back as the
  // default.
  const TrainingPlan d;
  // PEFT modules_to_save, when any: plans without it print as they always have.
  if (!p.lora.modules_to_save.empty()) j["lora"]["modules_to_save"] = p.lora.modules_to_save;
  if (p.eval_strategy != d.eval_strategy || p.eval_batch != d.eval_batch) {
    j["eval_strategy"] = name_of(p.eval_strategy);
    j["eval_batch"] = p.eval_batch;
  }
  // What else a plan carries, written when it is not the default so that every plan reads back
  // through plan_from_json() as it was priced: the library versions, the behaviour switches
  // beyond the framework profile, the CPU-kernel pricing of traced rows, the allocator
  // configuration, and the layout.
  if (!p.library_versions.empty()) {
    nlohmann::json versions = nlohmann::json::object();
    for (const auto& [library, version] : p.library_versions) versions[library] = version;
    j["library_versions"] = std::move(versions);
  }
  if (nlohmann::json b = behaviour_overrides(p); !b.empty()) j["behaviour"] = std::move(b);
  if (p.cpu_kernels) j["cpu_kernels"] = true;
  if (!p.alloc_conf.empty()) j["alloc_conf"] = p.alloc_conf;
  if (nlohmann::json l = layout_json(p.layout); l != layout_json(Layout{})) {
    j["layout"] = std::move(l);
  }
  return j;
}

std::string render_plan_json(const TrainingPlan& plan) {
  return plan_json(plan).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace trainmem

// The plan as JSON: every TrainingPlan field under its own snake_case name, so a plan written by
// render_plan_json() reads back through plan_from_json() unchanged (docs/formats.md, "plan").
#include <nlohmann/json.hpp>

#include "render/json.h"
#include "trainmem/plan.h"

namespace trainmem {

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
  if (p.eval_strategy != d.eval_strategy || p.eval_batch != d.eval_batch) {
    j["eval_strategy"] = name_of(p.eval_strategy);
    j["eval_batch"] = p.eval_batch;
  }
  return j;
}

std::string render_plan_json(const TrainingPlan& plan) {
  return plan_json(plan).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace trainmem

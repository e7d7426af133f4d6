// A plan as text settings: what a command line, a measurement row or an imported config
// (TRL, PEFT, axolotl, ...) says about a run, applied to TrainingPlan's defaults in order (later
// settings win, as in argparse). Keys are snake_case, as in JSON and validation/data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainmem/errors.h"
#include "trainmem/plan.h"

namespace trainmem {

struct PlanSetting {
  std::string key;         // "optimizer", "seq", "lora_targets", ... (plan_setting_keys())
  std::string value;       // as typed: "paged_adamw_8bit", "4k", "q_proj, v_proj"
  std::string origin;      // who said it, for errors and notes: "--optim", "sft.yaml: optim"
  bool from_file = false;  // imported rather than typed: a setting with no effect is a note
};
using PlanPatch = std::vector<PlanSetting>;

// The keys apply_settings understands, in the order the command line applies them.
const std::vector<std::string>& plan_setting_keys();

// hf_trainer_defaults() written as settings (key, value), in plan_setting_keys() order: where a
// form starts so that it prices what the command line prices with no flags (the web page sends
// only the settings that differ from these). Keys with no default value (params) are absent.
PlanPatch default_settings();

struct PlanResult {
  TrainingPlan plan;
  std::vector<std::string> notes;  // settings that were read but change nothing, and why
};

// hf_trainer_defaults() with `patch` applied in order, then validate(). Errors name the origin of
// the setting. A typed setting with no effect under the chosen method (--lora-rank with --method
// full,
// --quant without qlora) is an error; an imported one is a note. Under the textbook convention
// bf16-mixed and fp16-mixed keep the seeds' meaning: 16-bit weights with an fp32 master copy.
Result<PlanResult> plan_from(const PlanPatch& patch);

}  // namespace trainmem

// The ecosystem's names for plan settings (src/plan/setting_aliases.cpp).
#pragma once

#include <span>
#include <string_view>

#include "trainmem/errors.h"
#include "trainmem/plan.h"

namespace trainmem {

struct SettingAlias {
  std::string_view name;      // the ecosystem's key: "per_device_train_batch_size", "bf16"
  std::string_view key;       // the plan setting it sets: "batch", "precision"
  std::string_view on_true;   // a switch's value when true ("bf16-mixed"); "" passes the value on
  std::string_view on_false;  // a switch's value when false; "" sets nothing
  std::string_view source;    // whose name it is: "HF TrainingArguments"
};
std::span<const SettingAlias> setting_aliases();

// The plan settings one setting stands for: itself when its key is a plan setting, the key renamed
// for a renaming alias, or what a switch sets (load_in_8bit: method qlora and quant int8; bf16
// false: nothing). A switch's value that is not a boolean is an error naming its origin.
Result<PlanPatch> canonical_settings(const PlanSetting& setting);

}  // namespace trainmem

// The trainmem.form/1 document (docs/formats.md): where a plan form starts and what it offers.
// "defaults" is the given plan written as settings (hf_trainer_defaults(), or the plan of a
// framework and method), so a form that sends only what differs from it prices what the command
// line prices with those flags;
// "choices" lists, for every enumerated plan setting, its vocabulary's canonical names and
// meanings (plan.h), the tables the command line's parsing and --help read.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

// "--optimizer-impl" -> "optimizer_impl": a vocabulary's flag as its plan setting key.
std::string setting_key(std::string flag) {
  if (flag.rfind("--", 0) == 0) flag.erase(0, 2);
  std::replace(flag.begin(), flag.end(), '-', '_');
  return flag;
}

}  // namespace

std::string render_form_json(const TrainingPlan& plan) {
  using nlohmann::json;
  json defaults = json::object();
  for (const PlanSetting& s : settings_of(plan)) defaults[s.key] = s.value;
  const std::vector<std::string>& keys = plan_setting_keys();
  json choices = json::object();
  for (const Vocabulary* vocabulary : all_vocabularies()) {
    const std::string key = setting_key(vocabulary->flag);
    // Vocabularies of things that are not plan settings (none today) are not the form's.
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
    json terms = json::array();
    for (const Term& t : vocabulary->terms)
      terms.push_back({{"name", t.name}, {"meaning", t.meaning}});
    choices[key] = terms;
  }
  const json doc = {{"schema", "trainmem.form/1"},
                    {"setting_keys", keys},
                    {"defaults", defaults},
                    {"choices", choices}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace trainmem

// trainmem models [--json]: the presets with their exact and published counts.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "flags.h"
#include "trainmem/units.h"

namespace trainmem::cli {

void register_models(CLI::App& app, Commands& commands) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("models", "List the built-in model presets");
  cmd->add_flag("--json", *json, "print JSON");
  commands.on(cmd, [json] {
    nlohmann::json rows = nlohmann::json::array();
    std::string text = fmt::format("{:<24} {:<36} {:>18} {:>12} {:>10}\n", "preset", "hf id",
                                   "exact params", "active", "published");
    for (const PresetInfo& p : list_presets()) {
      auto model = load_preset(p.id);
      if (!model) return report(model.error());
      const std::int64_t total = params_total(model->inventory);
      const std::int64_t active = params_active(model->inventory, model->spec);
      rows.push_back({{"id", p.id},
                      {"hf_id", p.hf_id},
                      {"model_type", model->spec.model_type},
                      {"params_total", total},
                      {"params_active", active},
                      {"params_mtp", params_mtp(model->inventory)},
                      {"published", p.published},
                      {"published_params", p.published_params}});
      text += fmt::format("{:<24} {:<36} {:>18} {:>12} {:>10}\n", p.id, p.hf_id, with_commas(total),
                          short_count(active), p.published);
    }
    if (*json) {
      std::cout << nlohmann::json{{"schema", "trainmem.models/1"}, {"models", rows}}.dump(
                       2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    } else {
      std::cout << text;
    }
    return 0;
  });
}

}  // namespace trainmem::cli

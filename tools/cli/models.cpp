// trainmem models [--json]: the presets with their exact and published counts.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "flags.h"
#include "trainmem/model.h"
#include "trainmem/render.h"

namespace trainmem::cli {

void register_models(CLI::App& app, Commands& commands) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("models", "List the built-in model presets");
  cmd->add_flag("--json", *json, "print JSON");
  commands.on(cmd, [json] {
    const std::vector<ModelListing> models = list_models();
    if (*json) {
      std::cout << render_models_json(models);
      return 0;
    }
    std::cout << fmt::format("{:<24} {:<36} {:>18} {:>12} {:>10}\n", "preset", "hf id",
                             "exact params", "active", "published");
    for (const ModelListing& m : models) {
      std::cout << fmt::format("{:<24} {:<36} {:>18} {:>12} {:>10}\n", m.preset.id, m.preset.hf_id,
                               with_commas(m.params_total), short_count(m.params_active),
                               m.preset.published);
    }
    return 0;
  });
}

}  // namespace trainmem::cli

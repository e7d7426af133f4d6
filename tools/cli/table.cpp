// trainmem table [--convention textbook|exact] [--json]: the seed-001 per-tier table.
#include <iostream>
#include <memory>

#include "commands.h"
#include "flags.h"
#include "trainmem/model.h"
#include "trainmem/solve.h"

namespace trainmem::cli {
namespace {

struct TableArgs {
  std::string convention = "textbook";
  bool json = false;
};

Result<std::vector<TableRow>> rows_for(const std::vector<LoadedModel>& models,
                                       Convention convention) {
  const std::vector<Device> tiers = seed_tiers();
  std::vector<TableRow> rows;
  for (const LoadedModel& m : models) rows.push_back(table_row(m, convention, tiers));
  return rows;
}

int run_table(const TableArgs& a) {
  const auto convention = parse_convention(a.convention);
  if (!convention) {
    return report(Error{ErrorCode::usage, "", "--convention",
                        "'" + a.convention + "' is not one of: textbook, exact"});
  }
  std::vector<LoadedModel> models;
  for (std::string_view id : seed_table_presets()) {
    auto model = load_preset(id);
    if (!model) return report(model.error());
    models.push_back(std::move(model.value()));
  }
  auto rows = rows_for(models, *convention);
  if (!rows) return report(rows.error());
  if (a.json) {
    std::cout << render_table_json(rows.value(), *convention);
    return 0;
  }
  const Convention other =
      *convention == Convention::textbook ? Convention::exact : Convention::textbook;
  auto beside = rows_for(models, other);
  if (!beside) return report(beside.error());
  std::cout << render_table_text(rows.value(), beside.value(), *convention);
  return 0;
}

}  // namespace

void register_table(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<TableArgs>();
  CLI::App* cmd = app.add_subcommand(
      "table", "Seed 001's table: Qwen3 models x full / LoRA / QLoRA, and the smallest tier");
  cmd->add_option("--convention", args->convention, "textbook | exact")->capture_default_str();
  cmd->add_flag("--json", args->json, "print JSON (trainmem.table/1)");
  commands.on(cmd, [args] { return run_table(*args); });
}

}  // namespace trainmem::cli

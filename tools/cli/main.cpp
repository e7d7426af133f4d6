// trainmem: will this training run fit in memory, and if not, what must change?
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <string_view>

#include "commands.h"
#include "util/edit_distance.h"

namespace {

// "unknown subcommand 'estmate'; did you mean 'estimate'?" instead of CLI11's "A subcommand is
// required", when the first word names no subcommand.
int unknown_subcommand(const CLI::App& app, std::string_view word) {
  std::string best, all;
  std::size_t best_distance = 3;  // suggest only near misses
  for (const CLI::App* sub : app.get_subcommands({})) {
    const std::string& name = sub->get_name();
    all += (all.empty() ? "" : ", ") + name;
    const std::size_t d = trainmem::edit_distance(word, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  const std::string shown =
      word.size() > 40 ? std::string(word.substr(0, 40)) + "..." : std::string(word);
  std::cerr << fmt::format("trainmem: error: unknown subcommand '{}'{}; subcommands: {}\n", shown,
                           best.empty() ? "" : fmt::format("; did you mean '{}'?", best), all);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainmem: the memory of training a language model, per GPU, before you run it"};
  app.require_subcommand(1);
  trainmem::cli::Commands commands;
  trainmem::cli::register_estimate(app, commands);
  trainmem::cli::register_models(app, commands);
  trainmem::cli::register_table(app, commands);
  trainmem::cli::register_gpus(app, commands);
  trainmem::cli::register_solve(app, commands);
  trainmem::cli::register_advise(app, commands);
  trainmem::cli::register_sweep(app, commands);
  trainmem::cli::register_validate(app, commands);
  trainmem::cli::register_plan(app, commands);
  trainmem::cli::register_emit(app, commands);
  if (argc >= 2 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) known = known || sub->check_name(argv[1]);
    if (!known) return unknown_subcommand(app, argv[1]);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help (exit 0) and usage errors; a usage error exits 2 as the design promises.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return commands.run();
}

// trainmem: will this training run fit in memory, and if not, what must change?
#include <iostream>

#include "commands.h"

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help (exit 0) and usage errors; a usage error exits 2 as the design promises.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return commands.run();
}

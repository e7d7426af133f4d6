// trainmem: will this training run fit in memory, and if not, what must change?
#include <iostream>

#include "commands.h"
#include "trainmem/trainmem.h"

int main(int argc, char** argv) {
  CLI::App app{"trainmem: the memory of training a language model, per GPU, before you run it"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("trainmem ") + std::string(trainmem::kVersion));
  trainmem::cli::Commands commands;
  for (int i = 1; i < argc; ++i) commands.args.emplace_back(argv[i]);
  trainmem::cli::register_estimate(app, commands);
  trainmem::cli::register_models(app, commands);
  trainmem::cli::register_table(app, commands);
  trainmem::cli::register_gpus(app, commands);
  trainmem::cli::register_solve(app, commands);
  trainmem::cli::register_advise(app, commands);
  trainmem::cli::register_sweep(app, commands);
  trainmem::cli::register_validate(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help (exit 0) and usage errors; a usage error exits 2 as the design promises.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return commands.run();
}

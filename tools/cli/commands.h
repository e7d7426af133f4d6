// Subcommands: each file registers its subcommand and the function that runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace trainmem::cli {

class Commands {
 public:
  void on(CLI::App* cmd, std::function<int()> run) { entries_.emplace_back(cmd, std::move(run)); }
  // The command line as typed (argv[1..]), so advice can print complete commands.
  std::vector<std::string> args;
  // Runs the parsed subcommand; 2 when none was given.
  int run() const {
    for (const auto& [cmd, fn] : entries_) {
      if (cmd->parsed()) return fn();
    }
    return 2;
  }

 private:
  std::vector<std::pair<CLI::App*, std::function<int()>>> entries_;
};

void register_estimate(CLI::App& app, Commands& commands);
void register_explain(CLI::App& app, Commands& commands);
void register_models(CLI::App& app, Commands& commands);
void register_table(CLI::App& app, Commands& commands);
void register_gpus(CLI::App& app, Commands& commands);
void register_solve(CLI::App& app, Commands& commands);
void register_advise(CLI::App& app, Commands& commands);
void register_sweep(CLI::App& app, Commands& commands);
void register_validate(CLI::App& app, Commands& commands);
void register_plan(CLI::App& app, Commands& commands);
void register_emit(CLI::App& app, Commands& commands);

}  // namespace trainmem::cli

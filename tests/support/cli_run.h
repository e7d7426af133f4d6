// Runs the built command line (TRAINMEM_CLI) with arguments, capturing stdout and stderr together.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainmem::testing_support {

struct CliRun {
  int code = -1;    // the exit code; -1 when the process did not exit normally
  std::string out;  // stdout and stderr, interleaved
};

// `env`: a prefix for the shell, e.g. "env -u PYTORCH_ALLOC_CONF NAME=VALUE".
CliRun run_cli(const std::string& args, const std::string& env = "");

// Whether the captured output contains `text`.
bool contains(const CliRun& r, const std::string& text);

// `trainmem estimate ARGS --json`, parsed; a failing run or bad JSON fails the calling test.
nlohmann::json estimate_json(const std::string& args);

// A config file of tests/data/import/, the importers' fixtures.
std::string import_data(const std::string& name);

}  // namespace trainmem::testing_support

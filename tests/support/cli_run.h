// Runs the built trainmem command line (TRAINMEM_CLI) and captures its exit code and output.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainmem::test {

struct CliRun {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// `args` is appended to the binary's path as shell words.
CliRun run_cli(const std::string& args);
bool contains(const CliRun& r, const std::string& text);

}  // namespace trainmem::test

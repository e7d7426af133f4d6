// Runs the built command line (TRAINMEM_CLI) with arguments, capturing stdout and stderr together.
#pragma once

#include <string>

namespace trainmem::testing_support {

struct CliRun {
  int code = -1;    // the exit code; -1 when the process did not exit normally
  std::string out;  // stdout and stderr, interleaved
};

CliRun run_cli(const std::string& args);

// Whether the captured output contains `text`.
bool contains(const CliRun& r, const std::string& text);

}  // namespace trainmem::testing_support

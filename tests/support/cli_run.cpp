#include "support/cli_run.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace trainmem::testing_support {

CliRun run_cli(const std::string& args, const std::string& env) {
  const std::string command = env + " " + std::string(TRAINMEM_CLI) + " " + args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) r.out += buffer.data();
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool contains(const CliRun& r, const std::string& text) {
  return r.out.find(text) != std::string::npos;
}

nlohmann::json estimate_json(const std::string& args) {
  const CliRun r = run_cli("estimate " + args + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

std::string import_data(const std::string& name) {
  return std::string(TRAINMEM_SOURCE_DIR) + "/tests/data/import/" + name;
}

}  // namespace trainmem::testing_support

// trainmem: will this training run fit in memory, and if not, what must change?
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "flags.h"
#include "trainmem/trainmem.h"

namespace {

// "unknown subcommand 'estmate'; did you mean 'estimate'?" instead of CLI11's "A subcommand is
// required", when the first word names no subcommand.
int unknown_subcommand(const CLI::App& app, std::string_view word) {
  std::vector<std::string> names;
  std::string all;
  for (const CLI::App* sub : app.get_subcommands({})) {
    names.push_back(sub->get_name());
    all += (all.empty() ? "" : ", ") + sub->get_name();
  }
  const std::string best = trainmem::nearest_name(word, names, 3);  // near misses only
  const std::string shown =
      word.size() > 40 ? std::string(word.substr(0, 40)) + "..." : std::string(word);
  std::cerr << fmt::format("trainmem: error: unknown subcommand '{}'{}; subcommands: {}\n", shown,
                           best.empty() ? "" : fmt::format("; did you mean '{}'?", best), all);
  return 2;
}

// Each subcommand's names and the function that registers it. Only the invoked one is built:
// CLI11 constructs every option object of every registered subcommand, which was a fifth of a
// whole `trainmem estimate` run; help, --version and an unknown first word get them all.
struct Subcommand {
  std::vector<std::string_view> names;
  void (*add)(CLI::App&, trainmem::cli::Commands&);
};

const std::vector<Subcommand>& subcommands() {
  using namespace trainmem::cli;
  static const std::vector<Subcommand> all = {
      {{"estimate"}, register_estimate}, {{"explain"}, register_explain},
      {{"models"}, register_models},     {{"table"}, register_table},
      {{"gpus"}, register_gpus},         {{"solve"}, register_solve},
      {{"advise"}, register_advise},     {{"sweep"}, register_sweep},
      {{"validate"}, register_validate}, {{"plan"}, register_plan},
      {{"emit"}, register_emit}};
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainmem: the memory of training a language model, per GPU, before you run it"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("trainmem ") + std::string(trainmem::kVersion));
  trainmem::cli::Commands commands;
  for (int i = 1; i < argc; ++i) commands.args.emplace_back(argv[i]);
  const Subcommand* invoked = nullptr;
  for (const Subcommand& s : subcommands()) {
    for (std::string_view name : s.names) {
      if (argc >= 2 && name == argv[1]) invoked = &s;
    }
  }
  if (invoked != nullptr) {
    trainmem::cli::register_only_named_flags(commands.args);
    invoked->add(app, commands);
  } else {
    for (const Subcommand& s : subcommands()) s.add(app, commands);
  }
  if (argc >= 2 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) known = known || sub->check_name(argv[1]);
    if (!known) return unknown_subcommand(app, argv[1]);
  }
  // An empty value ("--gpu ''", "--svg=") would read as the flag not given; only an empty
  // allocator configuration means something (PyTorch's defaults).
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::string_view before = i > 1 ? std::string_view(argv[i - 1]) : std::string_view();
    const bool empty_inline = arg.starts_with("--") && arg.ends_with("=");
    if ((arg.empty() && before != "--alloc-conf") || (empty_inline && arg != "--alloc-conf=")) {
      const std::string_view flag = arg.empty() ? before : arg.substr(0, arg.size() - 1);
      if (flag.starts_with("-")) {
        std::cerr << fmt::format(
            "trainmem: error: {}: an empty value (give one, or leave the flag out)\n", flag);
      } else {
        std::cerr << fmt::format("trainmem: error: an empty argument after '{}'\n", flag);
      }
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help (exit 0) and usage errors; a usage error exits 2 as the design promises.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  const int code = commands.run();
  // A report that did not reach its reader (a full disk, a closed pipe) is a failure, not exit 0.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "trainmem: error: cannot write to standard output\n";
    return code == 0 ? 1 : code;
  }
  return code;
}

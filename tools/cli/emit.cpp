// trainmem emit FORMAT MODEL [plan and layout flags] [-o FILE]: the config that runs the priced
// plan (deepspeed | accelerate-fsdp | fsdp2 | torchrun | megatron). `estimate --from FILE` reads
// it back and prices the same plan.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "commands.h"
#include "flags.h"
#include "trainmem/distributed.h"

namespace trainmem::cli {
namespace {

struct EmitArgs {
  std::string format;
  std::string model;
  PlanFlags plan;
  std::string output;
};

int run_emit(const EmitArgs& a) {
  const auto format = parse_emit_format(a.format);
  if (!format) {
    return report(Error{ErrorCode::usage, "", "format",
                        fmt::format("'{}' is not one of: deepspeed, accelerate-fsdp, fsdp2, "
                                    "torchrun, megatron",
                                    a.format)});
  }
  auto in = read_pricing_inputs(a.model, a.plan, DeviceFlags{}, OutputFlags{});
  if (!in) return report(in.error());
  auto text = emit_config(*format, in->model, in->plan);
  if (!text) return report(text.error());
  if (a.output.empty()) {
    std::cout << text.value();
    return 0;
  }
  std::ofstream out(a.output);
  out << text.value();
  out.flush();  // a full disk shows on the flush, not on the buffered write
  if (!out) return report(bad_input(a.output, "-o", "cannot write the file"));
  return 0;
}

}  // namespace

void register_emit(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<EmitArgs>();
  CLI::App* cmd = app.add_subcommand("emit", "Write the config that runs the priced plan");
  cmd->add_option("format", args->format,
                  "deepspeed | accelerate-fsdp | fsdp2 | torchrun | megatron")
      ->required();
  cmd->add_option("model", args->model, "preset, HF id, config.json, or a folder")->required();
  add_plan_flags(*cmd, args->plan);
  cmd->add_option("-o,--output", args->output, "write to FILE instead of standard output");
  commands.on(cmd, [args] { return run_emit(*args); });
}

}  // namespace trainmem::cli

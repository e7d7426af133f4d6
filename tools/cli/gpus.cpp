// trainmem gpus [--json] [--kind gpu|unified|tier]: the device database.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "flags.h"
#include "trainmem/render.h"

namespace trainmem::cli {

void register_gpus(CLI::App& app, Commands& commands) {
  struct Args {
    bool json = false;
    std::string kind;
    DeviceFlags devices;  // --devices FILE / TRAINMEM_DEVICES
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("gpus", "List the devices: GPUs, Apple machines, the tiers");
  cmd->add_flag("--json", a->json, "print JSON");
  cmd->add_option("--kind", a->kind, "only gpu | unified | tier");
  add_devices_file_flag(*cmd, a->devices);
  commands.on(cmd, [a] {
    if (auto e = load_user_devices(a->devices)) return report(*e);
    if (!a->kind.empty() && a->kind != "gpu" && a->kind != "unified" && a->kind != "tier") {
      return report(Error{ErrorCode::usage, "", "--kind",
                          fmt::format("'{}' is not one of: gpu, unified, tier", a->kind)});
    }
    std::vector<Device> shown;
    std::string text = fmt::format("{:<18} {:<8} {:>11} {:>10} {:>10} {:>11}  {:<5} {}\n", "id",
                                   "kind", "capacity", "(GB)", "reserve", "usable", "bf16", "name");
    for (const Device& d : list_devices()) {
      if (!a->kind.empty() && name_of(d.kind) != a->kind) continue;
      shown.push_back(d);
      text += fmt::format("{:<18} {:<8} {:>11} {:>10} {:>10} {:>11}  {:<5} {}\n", d.id,
                          name_of(d.kind), format_bytes(d.capacity_bytes, Unit::gib),
                          fmt::format("{:.1f} GB", in_unit(d.capacity_bytes, Unit::gb)),
                          format_bytes(d.reserve_bytes, Unit::gib),
                          format_bytes(d.usable_bytes(), Unit::gib), d.bf16 ? "yes" : "no", d.name);
    }
    if (a->json) {
      std::cout << render_devices_json(shown);
    } else {
      std::cout << text
                << "\nCapacity is what the driver reports (GiB = 2^30 bytes; the tiers are "
                   "decimal GB). Usable = capacity - reserve; --reserve overrides. See "
                   "docs/devices.md.\n";
    }
    return 0;
  });
}

}  // namespace trainmem::cli

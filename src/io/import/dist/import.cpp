// import_config: detects the format from the content and hands it to its importer; the result is
// validated like a plan from flags.
#include <fmt/format.h>

#include "io/import/dist/importers.h"
#include "io/import/formats.h"
#include "trainmem/distributed.h"

namespace trainmem {
namespace import {

void place(Layout& l, std::int64_t world, std::int64_t gpus_per_node) {
  std::int64_t gpn = gpus_per_node > 0 ? gpus_per_node : std::min<std::int64_t>(world, 8);
  if (gpn < 1 || world % gpn != 0) gpn = world;
  l.gpus_per_node = gpn < 1 ? 1 : gpn;
  l.nodes = world / l.gpus_per_node < 1 ? 1 : world / l.gpus_per_node;
}

std::optional<Error> set_offload_device(const std::string& file, const std::string& field,
                                        const std::string& device, bool optimizer, Layout& l) {
  if (device == "none") return std::nullopt;
  if (device != "cpu" && device != "nvme") {
    return bad_input(file, field, fmt::format("'{}' is not none, cpu or nvme", device));
  }
  (optimizer ? l.offload_optimizer : l.offload_params) = true;
  l.offload_to = device == "cpu" ? OffloadTarget::cpu : OffloadTarget::nvme;
  return std::nullopt;
}

}  // namespace import

Result<TrainingPlan> import_config(const std::string& path, const std::string& text,
                                   const TrainingPlan& base, std::int64_t gpus_per_node) {
  const auto first = text.find_first_not_of(" \t\r\n");
  Result<TrainingPlan> out = bad_input(path, "", "empty file");
  if (first == std::string::npos) return out;
  if (text[first] == '{') {
    out = import::from_deepspeed(path, text, base, gpus_per_node);
  } else if (text.find("torchrun") != std::string::npos ||
             text.find("pretrain_gpt.py") != std::string::npos) {
    out = import::from_launch(path, import::read_command_words(text), base);
  } else if (text.find("[parallelism]") != std::string::npos ||
             text.find("[training]") != std::string::npos) {
    out = import::from_torchtitan(path, import::read_toml(text), base, gpus_per_node);
  } else if (text.find("distributed_type:") != std::string::npos) {
    auto keys = io::flatten_config(text, path);
    if (!keys) return keys.error();
    out = import::from_accelerate(path, keys.value(), base);
  } else {
    return bad_input(path, "",
                     "not a DeepSpeed JSON, accelerate YAML, torchtitan TOML or "
                     "torchrun/Megatron launch script");
  }
  if (!out) return out;
  if (auto e = validate(out.value())) {
    Error err = *e;
    err.file = path;
    return err;
  }
  return out;
}

}  // namespace trainmem

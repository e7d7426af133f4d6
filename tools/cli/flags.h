// Flags shared by every subcommand that prices a plan. Same names everywhere (kebab-case);
// values arrive as strings and are parsed by the engine's own name tables, so an error names the
// flag and lists what is accepted.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/errors.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem::cli {

// Distributed layout (docs/distributed.md). Empty strings / zero mean "not given".
struct LayoutFlags {
  std::int64_t gpus = 1, nodes = 1, tp = 1, pp = 1, cp = 1, ep = 1, virtual_stages = 1;
  std::optional<int> zero;  // absent: not given
  std::string fsdp;         // full | grad-op | hybrid | none
  int fsdp_version = 2;
  std::string engine;  // ddp | deepspeed | fsdp | megatron (implied by --zero/--fsdp)
  bool sequence_parallel = false, distributed_optimizer = false, gradient_as_bucket_view = false;
  std::string offload;  // optimizer | params | both
  std::string offload_to = "cpu";
  double bucket_cap_mb = 25;
  std::string reduce_bucket_size;  // elements, e.g. 5e8
  // torchtune's custom_sharded_layers: names, comma-separated (brackets and quotes are ignored,
  // so the YAML list pastes as it is)
  std::string custom_sharded_layers;
};

// The plan flags as typed, in the order the settings apply (plan_settings.h). Every flag, its
// aliases (--max-length for --seq, --optim for --optimizer, ...) and --from land here.
struct PlanFlags {
  PlanPatch given;
  std::vector<std::string> from;  // --from FILE, repeatable: other tools' configs
  LayoutFlags layout;             // --gpus, --nodes, --zero, --fsdp, ... (make_layout)
};

struct DeviceFlags {
  std::string memory;   // --memory 32GB
  std::string gpu;      // --gpu rtx-4090
  std::string reserve;  // --reserve 2GB
  std::string devices;  // --devices FILE (else $TRAINMEM_DEVICES): user device rows
};

struct OutputFlags {
  bool json = false;
  std::string units = "gib";
};

// Registering a CLI11 option is costly (CLI/App.hpp add_option builds the Option, splits its
// names and checks them against every other option of its App: ~10,000 instructions each), and
// the plan and layout flags are ~60 with their aliases: a sixth of a whole `trainmem estimate`.
// A flag the command line does not name would only keep its default, so once the command line is
// known, add_plan_flags registers only the plan and layout flags it names: all of them when it
// asks for help, has a short option, or was never given (tests, other callers).
void register_only_named_flags(const std::vector<std::string>& args);
void add_plan_flags(CLI::App& cmd, PlanFlags& flags);  // includes the layout flags
// The plan setting keys that `words` set, read as add_plan_flags reads them ("--bf16" sets
// precision; "--max_length=512" sets seq); none when they do not parse as plan flags alone.
std::set<std::string> plan_keys_of(const std::vector<std::string>& words);
// The layout flags, in their own --help section ("Layout across GPUs") of subcommand `cmd`.
void add_layout_flags(CLI::App& cmd, LayoutFlags& flags);
Result<Layout> make_layout(const LayoutFlags& flags);
void add_device_flags(CLI::App& cmd, DeviceFlags& flags);
// --devices FILE (environment: TRAINMEM_DEVICES), for subcommands that take no other device flag.
void add_devices_file_flag(CLI::App& cmd, DeviceFlags& flags);
// Reads the --devices / TRAINMEM_DEVICES file, if any, into the device list (use_user_devices).
std::optional<Error> load_user_devices(const DeviceFlags& flags);
void add_output_flags(CLI::App& cmd, OutputFlags& flags);

// The plan: defaults, then each --from file, then the typed flags (flags win).
Result<PlanResult> make_plan(const PlanFlags& flags);
// As make_plan, with the --from files first: their settings, the model they name, and a note per
// file listing the keys used and ignored.
struct ImportedPlan {
  PlanResult plan;
  std::string model;  // named by a --from file (the last that names one), or empty
  // Who set the sequence length ("--seq", "sft.yaml: max_length"), or empty: the default.
  std::string seq_origin;
};
Result<ImportedPlan> import_plan(const PlanFlags& flags);
// nullopt when neither --memory nor --gpu is given.
Result<std::optional<Device>> make_device(const DeviceFlags& flags);
Result<RenderOptions> make_render_options(const OutputFlags& flags);

// What every pricing subcommand reads from its flags: the plan, the device (nullopt without
// --memory/--gpu), the render options and the model, parsed in that order; the first error wins.
// An empty `model` takes the one a --from file names.
struct PricingInputs {
  TrainingPlan plan;
  std::vector<std::string> notes;  // from the plan's settings, to print with the report
  std::optional<Device> device;
  RenderOptions options;
  LoadedModel model;
  std::string seq_origin;  // as ImportedPlan's: empty when the sequence length is the default
};
Result<PricingInputs> read_pricing_inputs(const std::string& model, const PlanFlags& plan,
                                          const DeviceFlags& device, const OutputFlags& output);

// The model as a report names it: as typed, or the name the --from file gave when none was.
inline std::string model_label(const std::string& typed, const PricingInputs& in) {
  return typed.empty() ? in.model.spec.name : typed;
}

// The flag that sets a plan field the library names ("lora.rank" -> "--lora-rank"); fields in a
// file, and names that are already flags, are left as they are. report() and the web page use it.
std::string flag_for_field(const std::string& field);

// Prints "trainmem: error: MESSAGE" and returns the exit code for the error (1, or 2 for usage).
int report(const Error& error);

}  // namespace trainmem::cli

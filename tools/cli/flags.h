// Flags shared by every subcommand that prices a plan. Same names everywhere (kebab-case);
// values arrive as strings and are parsed by the engine's own name tables, so an error names the
// flag and lists what is accepted.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "trainmem/device.h"
#include "trainmem/errors.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem::cli {

// Distributed layout (docs/distributed.md). Empty strings / zero mean "not given".
struct LayoutFlags {
  std::int64_t gpus = 1, nodes = 1, tp = 1, pp = 1, cp = 1, ep = 1, virtual_stages = 1;
  int zero = -1;     // -1: not given
  std::string fsdp;  // full | grad-op | hybrid | none
  int fsdp_version = 2;
  std::string engine;  // ddp | deepspeed | fsdp | megatron (implied by --zero/--fsdp)
  bool sequence_parallel = false, distributed_optimizer = false, gradient_as_bucket_view = false;
  std::string offload;  // optimizer | params | both
  std::string offload_to = "cpu";
  double bucket_cap_mb = 25;
  std::string reduce_bucket_size;  // elements, e.g. 5e8
};

struct PlanFlags {
  // precision, optimizer, optimizer_impl, checkpointing and loss left empty take the framework
  // profile's default (src/plan/framework.h), else the global one.
  std::string method = "full", precision, optimizer, optimizer_impl, checkpointing,
              attention = "sdpa", loss, convention = "exact", framework = "hf";
  std::string quant;  // empty: nf4; given with a method other than qlora: refused
  std::string versions;  // --versions transformers=4.43,bitsandbytes=0.41
  bool padding_mask = false, offload_activations = false, optimizer_in_backward = false,
       keep_outputs = false;
  std::int64_t batch = 1, seq = 1024, grad_accum = 1, lora_rank = 16;
  double lora_alpha = 32;
  std::optional<double> lora_dropout;  // unset: the framework's default (litgpt 0.05), else 0
  std::string lora_targets = "q,k,v,o,gate,up,down";
  bool dora = false, no_double_quant = false, no_prepare_kbit = false;
  std::string train_modules, train_layers;
  std::string params;  // --params 1.54e9
  LayoutFlags layout;
  std::string from;  // --from FILE: a DeepSpeed/accelerate/torchtitan/launch config (emit.h)
};

struct DeviceFlags {
  std::string memory;   // --memory 32GB
  std::string gpu;      // --gpu rtx-4090
  std::string reserve;  // --reserve 2GB
};

struct OutputFlags {
  bool json = false;
  std::string units = "gib";
};

void add_plan_flags(CLI::App& cmd, PlanFlags& flags);  // includes the layout flags
void add_layout_flags(CLI::App& cmd, LayoutFlags& flags);
Result<Layout> make_layout(const LayoutFlags& flags);
void add_device_flags(CLI::App& cmd, DeviceFlags& flags);
void add_output_flags(CLI::App& cmd, OutputFlags& flags);

Result<TrainingPlan> make_plan(const PlanFlags& flags);
// nullopt when neither --memory nor --gpu is given.
Result<std::optional<Device>> make_device(const DeviceFlags& flags);
Result<RenderOptions> make_render_options(const OutputFlags& flags);

// What every pricing subcommand reads from its flags: the plan, the device (nullopt without
// --memory/--gpu), the render options and the model, parsed in that order; the first error wins.
struct PricingInputs {
  TrainingPlan plan;
  std::optional<Device> device;
  RenderOptions options;
  LoadedModel model;
};
Result<PricingInputs> read_pricing_inputs(const std::string& model, const PlanFlags& plan,
                                          const DeviceFlags& device, const OutputFlags& output);

// The flag that sets a plan field the library names ("lora.rank" -> "--lora-rank"); fields in a
// file, and names that are already flags, are left as they are. report() and the web page use it.
std::string flag_for_field(const std::string& field);

// Prints "trainmem: error: MESSAGE" and returns the exit code for the error (1, or 2 for usage).
int report(const Error& error);

}  // namespace trainmem::cli

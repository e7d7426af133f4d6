// The framework profiles behind the --framework setting (src/plan/framework.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainmem/plan.h"

namespace trainmem {

// Framework profiles (the --framework setting; the table is in src/plan/framework.cpp): which
// training framework runs the step, as a table of differences from the Hugging Face behaviour
// (FrameworkBehaviour's defaults). A difference names the profile it belongs to (or every profile),
// optionally a library version range, the knob it sets and the source it comes from. make_plan
// applies the table once; the ledger only reads the knobs. docs/frameworks.md documents every row.

// One knob of FrameworkBehaviour (trainmem/plan.h).
enum class Knob {
  outputs_kept,
  fp32_logits_in_model,
  loss_shift_copy,
  loss_upcast,
  loss_chunks,
  loss_chunk_positions,
  logits_freed_after_loss,
  adapters_fp32,
  optimizer_in_backward,
  offload_checkpoints,
  bnb_saves_4bit_input,
  padding_mask,
  metrics_logits_copy,
  fused_qkv_attention,
  unties_embeddings,
  cublas_workspaces,
  unified_memory,
  lora_last_layers,
  eval_between_steps,
  generates_sample,
  load_quantiser,  // the LoadQuantiser's value (plan.h)
  quantises_lm_head,
  experts_as_linears,
  quantises_fused_experts,
  compiled_loss,
  compiled_layers,
  kv_cache_in_output,
  cache_copies_states,
  checkpointing_input_grads,
  model_dropout,
  fused_gelu,
  rms_norm_fp32_weight,
  loss_in_model,
  skips_grad_sync_while_accumulating,
  bnb_embeddings_32bit,
};
// How a knob's value reads: a switch (0/1), a count, or a LoadQuantiser.
enum class KnobKind { flag, count, load_quantiser };
// One row of the knob table (src/plan/knobs.cpp): its name, as in the framework table, the plan
// JSON's "behaviour" object and docs/frameworks.md, and how to read and set it.
struct KnobInfo {
  Knob knob;
  std::string_view name;
  KnobKind kind;
  std::int64_t (*get)(const FrameworkBehaviour&);
  void (*set)(FrameworkBehaviour&, std::int64_t);
};
std::span<const KnobInfo> knobs();  // every knob, in FrameworkBehaviour's order
const KnobInfo& knob_info(Knob k);
std::string_view knob_name(Knob k);  // "outputs_kept", as in JSON and docs
void set_knob(FrameworkBehaviour& b, Knob k, std::int64_t v);
std::string_view name_of(LoadQuantiser q);  // "lightning_bnb"
std::optional<LoadQuantiser> parse_load_quantiser(std::string_view s);

struct FrameworkProfile {
  std::string_view name;     // "torchtune"
  std::string_view library;  // the library `name@VERSION` names: "transformers", "torchtune", ...
  std::string_view base;     // the profile whose rows it inherits ("hf" for trl), or ""
  std::string_view summary;  // one line for help and notes
};

// A change from the hf behaviour. `framework` "*" applies to every profile (library behaviour
// such as bitsandbytes'); `library` with `below` / `from` restricts it to a version range
// (half-open: from <= v < below). Without a version given for the library, the current release
// is assumed, so a `below` row does not apply and a `from` row does.
struct Difference {
  std::string_view framework;
  std::string_view method;   // "" = every method, else "full", "lora", "qlora", "freeze"
  std::string_view library;  // "" = any version
  std::string_view from;     // "" = no lower bound
  std::string_view below;    // "" = no upper bound
  Knob knob;
  std::int64_t value;
  std::string_view what;    // the behaviour, in words
  std::string_view source;  // the framework source file or document
};

// Flag defaults a profile changes (used when the flag is not given). `from` restricts one to the
// releases of the profile's library from that version on (TRL's SFTConfig checkpoints by default
// since 0.22); without a version given, the current release is assumed, so it applies.
struct ProfileDefault {
  std::string_view framework;
  std::string_view method;  // "" = every method
  std::string_view flag;    // "precision", "optimizer", "optimizer_impl", "checkpointing", ...
  std::string_view value;   // in flag vocabulary
  std::string_view source;
  std::string_view from = "";  // "" = every version of the profile's library
};

// Where bitsandbytes < 0.43.2 keeps each 4-bit layer's input (the knob bnb_saves_4bit_input,
// and the activation model's terms it adds).
inline constexpr const char* kBnbKeepsInputSource =
    "bitsandbytes 0.43.1 autograd/_functions.py MatMul4Bit.forward ctx.tensors = (A, B) "
    "(0.43.2, #1270: (None, B))";

std::span<const FrameworkProfile> framework_profiles();
std::span<const Difference> framework_differences();
std::span<const ProfileDefault> framework_defaults();

// Libraries a version can be given for (`--versions transformers=4.43,bitsandbytes=0.41`).
std::span<const std::string_view> versioned_libraries();

// "litgpt" or "hf@4.43": the profile name (checked, with a did-you-mean) and the version of its
// library, appended to `versions`. Errors name --framework.
std::optional<Error> parse_framework(std::string_view text, std::string& name,
                                     std::vector<std::pair<std::string, std::string>>& versions);
// "transformers=4.43,bitsandbytes=0.41.1": checked library names and dotted numeric versions.
std::optional<Error> parse_library_versions(
    std::string_view text, std::vector<std::pair<std::string, std::string>>& versions);

// True for a profile that runs transformers' own model classes (hf and the profiles built on it),
// whose HF switches (use_cache) mean something.
bool runs_transformers_models(std::string_view framework);

// -1, 0, 1 comparing dotted numeric versions ("4.43" < "4.46.1"); missing parts are 0.
int compare_versions(std::string_view a, std::string_view b);

// The profile's default for a flag under a method ("" for none), or "" when it keeps the global
// default. `versions`: the plan's library versions (a versioned default needs its library's).
std::string_view profile_default(
    std::string_view framework, std::string_view method, std::string_view flag,
    const std::vector<std::pair<std::string, std::string>>& versions = {});

// The differences that apply to this plan (its framework and library versions), in table order.
std::vector<const Difference*> applied_differences(const TrainingPlan& plan);

// Resets plan.behaviour to the hf defaults and applies every matching difference. Pure.
void apply_framework(TrainingPlan& plan);

}  // namespace trainmem

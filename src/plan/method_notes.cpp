// method_notes(): what a method did to the model, said in the report. LoRA/QLoRA state what was
// adapted and the trainable share the way PEFT's print_trainable_parameters() prints it; MoE
// models say whether the routed experts were adapted; QLoRA says what stayed 16-bit; paged
// optimizers say what paging changes.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "model/inventory.h"
#include "model/model_spec.h"
#include "plan/method.h"
#include "plan/optimizer.h"
#include "plan/quantisation.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// PEFT's print_trainable_parameters(): "trainable params: N || all params: M || trainable%: P",
// where all params include the adapters.
std::string peft_line(std::int64_t trainable, std::int64_t all) {
  return fmt::format(
      "trainable params: {} || all params: {} || trainable%: {:.4f}", with_commas(trainable),
      with_commas(all),
      all > 0 ? 100.0 * static_cast<double>(trainable) / static_cast<double>(all) : 0.0);
}

void lora_notes(const LoadedModel& model, const TrainingPlan& plan, const ParameterInventory& inv,
                std::vector<std::string>& out) {
  std::int64_t adapter = 0, modules = 0, base = 0, experts_adapter = 0, copies = 0;
  std::set<std::string> roles;
  for (const TensorGroup& g : inv.groups) {
    if (g.mtp) continue;
    if (g.module_copy) copies += group_params(g);
    if (!is_adapter(g)) {
      base += group_params(g);
      continue;
    }
    adapter += group_params(g);
    if (g.expert == ExpertKind::routed) experts_adapter += group_params(g);
    if (g.name.find("lora_B") != std::string::npos ||
        g.name.find("lora_embedding_B") != std::string::npos) {
      modules += g.multiplicity;
      roles.insert(g.name.find("textbook dense") != std::string::npos
                       ? fmt::format("{} (as dense)", role_name(g.role))
                       : std::string(role_name(g.role)));
    }
  }
  out.push_back(
      fmt::format("{} r={} on {}: {} modules adapted ({}){}. PEFT print_trainable_parameters: {}.",
                  plan.method == Method::qlora ? "QLoRA" : "LoRA", plan.lora.rank,
                  join(plan.lora.targets), with_commas(modules), join({roles.begin(), roles.end()}),
                  plan.lora.dora ? ", with DoRA magnitude vectors" : "",
                  peft_line(adapter + copies, base + adapter)));
  if (copies > 0) {
    out.push_back(fmt::format(
        "modules_to_save {}: a trained copy of each beside the frozen original (PEFT "
        "ModulesToSaveWrapper), {} params in the original's dtype, with their gradients and "
        "optimizer states.",
        join(plan.lora.modules_to_save), with_commas(copies)));
  }
  // --params prices the seeds' per-parameter arithmetic, adapters at the recipe's bytes like any
  // trainable parameter (ledger/weights.cpp add_textbook): no fp32 adapter note applies there.
  if (plan.params_override > 0) {
    out.push_back(
        "--params: adapters are priced like any trainable parameter at the precision's bytes "
        "(seed 001's arithmetic), not in PEFT's fp32.");
  } else if (plan.convention == Convention::exact && !plan.behaviour.adapters_fp32) {
    out.push_back(fmt::format(
        "Adapters are built in the model dtype ({} framework profile), like the base weights.",
        plan.framework));
  } else if (plan.convention == Convention::exact) {
    out.push_back(
        "Adapters are kept in fp32 (PEFT get_peft_model autocast_adapter_dtype=True), so each "
        "adapter parameter costs 4 B weight + 4 B gradient + its optimizer state, with no "
        "separate master copy.");
  }
  const MoeSpec& moe = model.spec.moe;
  if (moe.experts == 0) return;
  const bool by_name = plan.behaviour.experts_as_linears;
  if (experts_adapter > 0) {
    out.push_back(fmt::format(
        "MoE: the routed experts are adapted ({} experts x {} MoE layers, {} adapter params): {}",
        moe.experts, moe_layer_count(model.spec), with_commas(experts_adapter),
        by_name ? "on transformers < 5 each expert is an nn.Linear, which target_modules names "
                  "reach."
                : "transformers 5's fused 3-D experts, which PEFT target_parameters adapts "
                  "('experts'; target_modules names do not reach them)."));
  } else {
    out.push_back(fmt::format(
        "MoE: the {} routed experts per layer are not adapted. gate/up/down reach dense MLPs and "
        "shared experts only: transformers 5 fuses routed experts into 3-D parameters that "
        "PEFT target_modules does not match. Add 'experts' to adapt every expert (PEFT "
        "target_parameters), or give --versions transformers=4.57 for transformers 4's "
        "nn.Linear experts, which the names reach.{}",
        moe.experts,
        plan.convention == Convention::textbook
            ? fmt::format(" Textbook, as seed 001 does: each MoE layer's MLP adapter is priced as "
                          "a dense MLP of intermediate_size {}.",
                          model.spec.intermediate)
            : ""));
  }
  const bool router = std::any_of(inv.groups.begin(), inv.groups.end(), [](const TensorGroup& g) {
    return is_adapter(g) && g.role == Role::router;
  });
  out.push_back(router ? "MoE: the router is adapted."
                       : "MoE: the router is not adapted (name it with 'router').");
}

void qlora_notes(const TrainingPlan& plan, const ParameterInventory& inv,
                 std::vector<std::string>& out) {
  std::int64_t quantised = 0, kept = 0;
  for (const TensorGroup& g : inv.groups) {
    if (g.mtp || is_adapter(g)) continue;
    (g.quantised ? quantised : kept) += group_params(g);
  }
  out.push_back(fmt::format(
      "QLoRA base: {} params of linear weights in {} at {:.3f} bits each{}; {} params stay "
      "16-bit (embeddings, lm_head, norms, router, biases: bitsandbytes and transformers "
      "defaults){}.",
      with_commas(quantised), name_of(plan.quant.kind), quantised_bits_per_weight(plan.quant),
      plan.quant.double_quant && plan.quant.kind != QuantKind::int8 ? " with double quantisation"
                                                                    : "",
      with_commas(kept),
      plan.quant.prepare_kbit
          ? ", and prepare_model_for_kbit_training upcasts them to fp32 (its own line in the "
            "exact convention; --no-prepare-kbit to skip it)"
          : ""));
  std::int64_t experts_kept = 0;
  for (const TensorGroup& g : inv.groups) {
    if (g.expert == ExpertKind::routed && !g.quantised && !is_adapter(g)) {
      experts_kept += group_params(g);
    }
  }
  if (experts_kept > 0) {
    out.push_back(fmt::format(
        "QLoRA on an MoE: the {} params of routed experts are among those kept {}: "
        "transformers 5 stores them as fused 3-D parameters, which bitsandbytes' 4-bit "
        "conversion skips (it replaces nn.Linear only; bitsandbytes issue #1849). On transformers "
        "4 (--versions transformers=4.57) each expert is an nn.Linear and is quantised; unsloth's "
        "MoE patch quantises the fused ones (--framework unsloth).",
        with_commas(experts_kept), plan.quant.prepare_kbit ? "and upcast to fp32" : "16-bit"));
  }
  if (plan.convention == Convention::textbook || plan.params_override > 0) {
    out.push_back(
        "Textbook: the 4-bit base is priced at a flat 0.55 B/param on the priced count (seed "
        "001); the exact convention prices the split above.");
  }
}

void freeze_notes(const TrainingPlan& plan, const ParameterInventory& inv,
                  std::vector<std::string>& out) {
  std::int64_t trainable = 0, all = 0;
  for (const TensorGroup& g : inv.groups) {
    if (g.mtp) continue;
    all += group_params(g);
    trainable += g.trainable ? group_params(g) : 0;
  }
  std::string layers;
  for (std::int64_t l : plan.freeze.train_layers) {
    layers += (layers.empty() ? "" : ",") + std::to_string(l);
  }
  out.push_back(fmt::format(
      "Freeze: modules {} in layers {} train; everything else is frozen at its storage dtype, "
      "with no gradient, optimizer state or master copy. {}.",
      plan.freeze.train_modules.empty() ? "all" : join(plan.freeze.train_modules),
      layers.empty() ? "all" : layers, peft_line(trainable, all)));
  if (trainable == 0)
    out.push_back("Freeze: nothing trains: name --train-modules or --train-layers.");
}

}  // namespace

std::vector<std::string> method_notes(const LoadedModel& model, const TrainingPlan& plan,
                                      const ParameterInventory& applied) {
  std::vector<std::string> out;
  switch (plan.method) {
    case Method::full:
      break;
    case Method::lora:
      lora_notes(model, plan, applied, out);
      break;
    case Method::qlora:
      lora_notes(model, plan, applied, out);
      qlora_notes(plan, applied, out);
      break;
    case Method::freeze:
      freeze_notes(plan, applied, out);
      break;
  }
  const OptimizerRow& row = optimizer_row(plan.optimizer);
  if (row.paged) {
    out.push_back(fmt::format(
        "{}: the optimizer states of tensors of {} elements or more live in CUDA unified memory "
        "(cudaMallocManaged) and are paged out to host RAM under memory pressure instead of "
        "failing with out-of-memory. That moves a spike, it does not shrink the steady state: "
        "the states are counted in full here. They do not show in "
        "torch.cuda.max_memory_allocated, but do in nvidia-smi while resident; smaller tensors' "
        "states and 8-bit absmax blocks are ordinary allocations in PyTorch's pool.",
        row.name, with_commas(kBnbPagedMinElements)));
  }
  if (row.storage == StateStorage::blockwise_8bit) {
    out.push_back(fmt::format(
        "{}: 8-bit states with one fp32 absmax per {} values; tensors under {} elements (norms, "
        "biases) keep 32-bit states (bitsandbytes min_8bit_size).",
        row.name, kBnbStateBlock, with_commas(kBnbMin8bitSize)));
  }
  return out;
}

}  // namespace trainmem

// apply_method(): the inventory as a fine-tuning method leaves it. Full fine-tune trains
// everything; LoRA/QLoRA freeze the base and append adapter tensors (PEFT
// peft/tuners/lora/layer.py: lora_A [r, in], lora_B [out, r], lora_embedding_A [r, V],
// lora_embedding_B [h, r], DoRA lora_magnitude_vector [out]); QLoRA also block-quantises the base
// linears (transformers bitsandbytes integration: lm_head stays 16-bit, and so do embeddings, norms
// and the MoE router); freeze trains a chosen subset. Everything is loaded in the precision
// recipe's weight dtype (from_pretrained(torch_dtype=...)).
#include "plan/method.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "model/dtype.h"
#include "model/inventory.h"
#include "plan/precision.h"
#include "trainmem/estimate.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

bool has(const std::vector<std::string>& targets, std::string_view name) {
  return std::find(targets.begin(), targets.end(), name) != targets.end();
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string stem(const std::string& name) {
  return ends_with(name, ".weight") ? name.substr(0, name.size() - 7) : name;
}

bool mlp_target(const std::vector<std::string>& t, const TensorGroup& g, std::string_view name,
                bool experts_by_name) {
  switch (g.expert) {
    case ExpertKind::routed:
      // transformers < 5 (experts_as_linears): each expert's gate_proj is an nn.Linear that
      // target_modules names reach; v5's fused 3-D experts only the 'experts' target reaches.
      return has(t, "experts") ||
             (experts_by_name && (has(t, "mlp") || has(t, "all-linear") || has(t, name)));
    case ExpertKind::shared:
      return has(t, "shared_experts") || has(t, "mlp") || has(t, "all-linear") || has(t, name);
    case ExpertKind::none:
      return has(t, "mlp") || has(t, "all-linear") || has(t, name);
  }
  return false;
}

// Bitsandbytes quantises the linear weights; transformers keeps lm_head (get_keys_to_not_convert)
// and the MoE router in 16-bit, and a bias stays beside its Linear4bit in 16-bit. A framework
// that converts every nn.Linear (FrameworkBehaviour::quantises_lm_head) quantises lm_head too.
bool quantisable(const TensorGroup& g, const FrameworkBehaviour& b) {
  if (g.role == Role::lm_head) return b.quantises_lm_head && is_linear_weight(g);
  // Fused 3-D experts (transformers 5) are no nn.Linear: bitsandbytes leaves them in the loaded
  // dtype unless a framework patch quantises them (FrameworkBehaviour::experts_as_linears).
  if (g.expert == ExpertKind::routed && !b.experts_as_linears && !b.quantises_fused_experts) {
    return false;
  }
  return is_linear_weight(g) && g.role != Role::router && g.role != Role::shared_expert_gate;
}

Dtype quant_dtype(QuantKind kind) {
  switch (kind) {
    case QuantKind::nf4:
      return Dtype::nf4;
    case QuantKind::fp4:
      return Dtype::fp4;
    case QuantKind::int8:
      return Dtype::i8;
  }
  return Dtype::nf4;
}

// `a_rows`: lora_A's rows, r unless an adapter stacks several (litgpt's LoRAQKVLinear).
void append_adapter(ParameterInventory& out, const TensorGroup& base, std::int64_t out_features,
                    std::int64_t in_features, const TrainingPlan& plan, Dtype dtype, bool embedding,
                    const std::string& name_stem, std::int64_t a_rows = 0) {
  TensorGroup a = base;
  a.trainable = true;
  a.quantised = false;
  a.is_bias = false;
  a.dtype = dtype;
  const std::int64_t r = plan.lora.rank;
  a.name = name_stem + (embedding ? ".lora_embedding_A" : ".lora_A.weight");
  a.adapter = AdapterPart::lora_a;
  a.shape = {a_rows > 0 ? a_rows : r, in_features};
  out.groups.push_back(a);
  a.name = name_stem + (embedding ? ".lora_embedding_B" : ".lora_B.weight");
  a.adapter = AdapterPart::lora_b;
  a.shape = {out_features, r};
  out.groups.push_back(a);
  if (plan.lora.dora) {
    a.name = name_stem + ".lora_magnitude_vector";
    a.adapter = AdapterPart::magnitude;
    a.shape = {out_features};
    out.groups.push_back(a);
  }
}

// litgpt's LoRAQKVLinear on the fused qkv weight: one lora_A of r rows per enabled projection
// and one lora_B over the enabled projections' widths (litgpt 0.4.13 lora.py:233-244, lit-gpt
// 8641822 lit_gpt/lora.py:208-218): q, k, v as the targets reach them (targets_group, as
// activation_settings reads them).
void append_litgpt_qkv_adapter(ParameterInventory& out, const TensorGroup& base,
                               const ModelSpec& spec, const TrainingPlan& plan, Dtype dtype,
                               const std::string& name_stem) {
  auto reaches = [&](Role role) {
    TensorGroup g;
    g.role = role;
    return targets_group(plan.lora.targets, g, false);
  };
  const std::int64_t enabled =
      (reaches(Role::q) ? 1 : 0) + (reaches(Role::k) ? 1 : 0) + (reaches(Role::v) ? 1 : 0);
  // A fused target named as such (qkv_proj, query_key_value) adapts all three.
  const std::int64_t n = enabled == 0 ? 3 : enabled;
  const std::int64_t q_out = spec.heads * spec.head_dim;
  const std::int64_t kv_out = spec.kv_heads * spec.head_dim;
  const std::int64_t widths = enabled == 0 ? q_out + 2 * kv_out
                                           : (reaches(Role::q) ? q_out : 0) +
                                                 (reaches(Role::k) ? kv_out : 0) +
                                                 (reaches(Role::v) ? kv_out : 0);
  const std::int64_t in_features = base.shape[1];
  append_adapter(out, base, widths, in_features, plan, dtype, false, name_stem, plan.lora.rank * n);
}

// The adapter dtype: PEFT get_peft_model(autocast_adapter_dtype=True) upcasts bf16/fp16 adapter
// weights to fp32 (peft/tuners/tuners_utils.py _cast_adapter_dtype). The textbook prices an
// adapter parameter like any trainable one, at the recipe's weight dtype.
Dtype adapter_dtype(const TrainingPlan& plan) {
  if (plan.convention == Convention::textbook) return recipe(plan.precision).weights;
  // litgpt, torchtune and mlx build adapters in the model dtype (FrameworkBehaviour).
  return plan.behaviour.adapters_fp32 ? Dtype::f32 : recipe(plan.precision).weights;
}

// --train-layers with LoRA is PEFT's layers_to_transform: only those layers get adapters. The
// group keeps its per-layer multiplicity for the chosen layers; groups outside the layers (the
// embedding, the head) are adapted when targeted.
TensorGroup in_chosen_layers(TensorGroup g, const std::vector<std::int64_t>& layers) {
  if (layers.empty() || g.layer_first < 0) return g;
  const std::int64_t span = g.layer_last - g.layer_first + 1;
  const auto chosen =
      static_cast<std::int64_t>(std::count_if(layers.begin(), layers.end(), [&](std::int64_t l) {
        return l >= g.layer_first && l <= g.layer_last;
      }));
  g.multiplicity = g.multiplicity / span * chosen;
  return g;
}

// The lm_head a tied embedding stands for: the embedding's tensor under the lm_head role (litgpt's
// own head beside it; PEFT's trained copy of a tied head). None without a 2-D token embedding.
std::optional<TensorGroup> head_of_tied_embedding(const ParameterInventory& inv) {
  for (const TensorGroup& g : inv.groups) {
    if (g.role != Role::embedding || g.mtp || g.is_bias || g.shape.size() != 2 || is_adapter(g))
      continue;
    TensorGroup head = g;
    head.name = "lm_head.weight";
    head.role = Role::lm_head;
    return head;
  }
  return std::nullopt;
}

void add_adapters(const LoadedModel& model, const TrainingPlan& plan, ParameterInventory& inv) {
  const std::vector<std::string>& t = plan.lora.targets;
  const Dtype dtype = adapter_dtype(plan);
  const bool textbook = plan.convention == Convention::textbook;
  const std::size_t base_count = inv.groups.size();
  bool lm_head_seen = false;
  for (std::size_t i = 0; i < base_count; ++i) {
    const TensorGroup g = inv.groups[i];
    if (g.mtp || g.is_bias || g.shape.size() != 2) continue;
    if (g.role == Role::lm_head) lm_head_seen = true;
    if (!targets_group(t, g, plan.behaviour.experts_as_linears)) continue;
    // Seed 001 prices a MoE model's MLP adapter as a dense MLP; the routed experts themselves are
    // adapted only when named, in either convention.
    const bool embedding = g.role == Role::embedding;
    const std::int64_t out_f = embedding ? g.shape[1] : g.shape[0];
    const std::int64_t in_f = embedding ? g.shape[0] : g.shape[1];
    const TensorGroup site = in_chosen_layers(g, plan.freeze.train_layers);
    if (site.multiplicity <= 0) continue;
    if (plan.behaviour.fused_qkv_attention && g.role == Role::qkv) {
      append_litgpt_qkv_adapter(inv, site, model.spec, plan, dtype, stem(g.name));
    } else {
      append_adapter(inv, site, out_f, in_f, plan, dtype, embedding, stem(g.name));
    }
  }
  // Tied embeddings: lm_head is a Linear sharing the embedding matrix; PEFT still adapts it.
  if (has(t, "lm_head") && !lm_head_seen) {
    if (auto head = head_of_tied_embedding(inv)) {
      append_adapter(inv, *head, head->shape[0], head->shape[1], plan, dtype, false, "lm_head");
    }
  }
  // Textbook on a MoE model: the seed's adapter treats each MoE layer's MLP as dense with
  // intermediate_size (Qwen3-30B-A3B: 32.2 M at r = 16).
  if (textbook && model.spec.moe.experts > 0 && model.spec.intermediate > 0) {
    const std::int64_t h = model.spec.hidden;
    const std::int64_t i_size = model.spec.intermediate;
    for (std::size_t i = 0; i < base_count; ++i) {
      const TensorGroup router = inv.groups[i];
      if (router.role != Role::router || router.mtp || router.is_bias) continue;
      const std::string prefix = stem(router.name);  // model.layers.A-B.mlp.gate
      const std::string mlp = prefix.substr(0, prefix.size() - 5);
      struct Proj {
        std::string_view name;
        Role role;
        std::int64_t out, in;
      };
      for (const Proj& p : {Proj{"gate", Role::gate, i_size, h}, Proj{"up", Role::up, i_size, h},
                            Proj{"down", Role::down, h, i_size}}) {
        if (!has(t, p.name) && !has(t, "mlp") && !has(t, "all-linear")) continue;
        TensorGroup dense = in_chosen_layers(router, plan.freeze.train_layers);
        if (dense.multiplicity == 0) continue;
        dense.role = p.role;
        dense.expert = ExpertKind::none;
        dense.shape = {p.out, p.in};
        append_adapter(inv, dense, p.out, p.in, plan, dtype, false,
                       fmt::format("{}.{}_proj(textbook dense)", mlp, p.name));
      }
    }
  }
}

// PEFT modules_to_save (peft/utils/other.py ModulesToSaveWrapper): the named module stays, frozen,
// and a deep copy beside it trains, in the original's dtype (the copy is no BaseTunerLayer, so
// autocast_adapter_dtype leaves it; under QLoRA prepare_model_for_kbit_training has already made
// it fp32). On a tied model, lm_head's copy is a new [vocab, hidden] weight and embed_tokens'
// copy no longer feeds the head, which keeps the original.
void add_module_copies(const LoadedModel& model, const TrainingPlan& plan,
                       ParameterInventory& inv) {
  const std::vector<std::string>& names = plan.lora.modules_to_save;
  const Dtype loaded = recipe(plan.precision).weights;
  std::vector<TensorGroup> copies;
  auto add_copy = [&](TensorGroup copy) {
    // PEFT's name: model.embed_tokens.modules_to_save.default.weight
    const std::size_t last = copy.name.rfind('.');
    copy.name = last == std::string::npos ? copy.name + ".modules_to_save.default"
                                          : copy.name.substr(0, last) + ".modules_to_save.default" +
                                                copy.name.substr(last);
    copy.trainable = true;
    copy.module_copy = true;
    if (copy.quantised) copy.dtype = loaded;  // a 4-bit head (quantises_lm_head) copies dequantised
    copy.quantised = false;
    copies.push_back(std::move(copy));
  };
  bool lm_head_seen = false;
  for (const TensorGroup& g : inv.groups) {
    if (g.mtp || is_adapter(g)) continue;
    const bool head = g.role == Role::lm_head;
    lm_head_seen = lm_head_seen || head;
    if ((head && has(names, "lm_head")) || (g.role == Role::embedding && has(names, "embed"))) {
      add_copy(g);
    }
  }
  if (has(names, "lm_head") && !lm_head_seen && model.spec.tied_embeddings) {
    if (auto tied_head = head_of_tied_embedding(inv)) add_copy(std::move(*tied_head));
  }
  inv.groups.insert(inv.groups.end(), copies.begin(), copies.end());
}

void quantise_base(const TrainingPlan& plan, ParameterInventory& inv) {
  for (TensorGroup& g : inv.groups) {
    if (quantisable(g, plan.behaviour)) {
      g.quantised = true;
      g.dtype = quant_dtype(plan.quant.kind);
    } else if (plan.quant.prepare_kbit && dtype_info(g.dtype).bits < 32) {
      // peft/utils/other.py prepare_model_for_kbit_training: every fp16/bf16 parameter that is
      // not Params4bit is cast to fp32.
      g.dtype = Dtype::f32;
    }
  }
}

void apply_freeze(const TrainingPlan& plan, ParameterInventory& inv) {
  const FreezePlan& f = plan.freeze;
  ParameterInventory out;
  for (TensorGroup g : inv.groups) {
    const bool module_ok = f.train_modules.empty() ||
                           targets_group(f.train_modules, g, plan.behaviour.experts_as_linears);
    if (g.mtp) {
      g.trainable = false;
      out.groups.push_back(std::move(g));
      continue;
    }
    if (f.train_layers.empty()) {
      g.trainable = !f.train_modules.empty() && module_ok;
      out.groups.push_back(std::move(g));
      continue;
    }
    if (g.layer_first < 0) {
      // Outside the layers (embeddings, final norm, head): trains only when named.
      g.trainable = !f.train_modules.empty() && module_ok;
      out.groups.push_back(std::move(g));
      continue;
    }
    const std::int64_t span = g.layer_last - g.layer_first + 1;
    const auto chosen = static_cast<std::int64_t>(
        std::count_if(f.train_layers.begin(), f.train_layers.end(),
                      [&](std::int64_t l) { return l >= g.layer_first && l <= g.layer_last; }));
    if (!module_ok || chosen == 0) {
      g.trainable = false;
      out.groups.push_back(std::move(g));
      continue;
    }
    if (chosen == span) {
      g.trainable = true;
      out.groups.push_back(std::move(g));
      continue;
    }
    // Split the group into runs of consecutive layers that all train or all stay frozen, each
    // with its own layer range, so what a layer keeps (autocast copies, checkpoints) is priced
    // for the layers that keep it.
    const auto trains = [&](std::int64_t l) {
      return std::find(f.train_layers.begin(), f.train_layers.end(), l) != f.train_layers.end();
    };
    const std::int64_t per_layer = g.multiplicity / span;
    for (std::int64_t first = g.layer_first; first <= g.layer_last;) {
      std::int64_t last = first;
      while (last + 1 <= g.layer_last && trains(last + 1) == trains(first)) ++last;
      TensorGroup run = g;
      run.layer_first = first;
      run.layer_last = last;
      run.multiplicity = per_layer * (last - first + 1);
      run.trainable = trains(first);
      run.name +=
          fmt::format(" (layers {}-{} {})", first, last, run.trainable ? "trained" : "frozen");
      out.groups.push_back(std::move(run));
      first = last + 1;
    }
  }
  inv = std::move(out);
}

}  // namespace

std::vector<std::string_view> lora_target_names() {
  std::vector<std::string_view> out;
  for (const Term& t : lora_target_vocabulary().terms) out.push_back(t.name);
  return out;
}

bool is_lora_target_name(std::string_view name) {
  const Term* t = find_term(lora_target_vocabulary(), name);
  return t != nullptr && t->name == name;
}

bool is_adapter(const TensorGroup& g) {
  return g.adapter != AdapterPart::none;
}

bool trains_embedding_tensor(const TensorGroup& g) {
  return g.role == Role::embedding && g.trainable && !is_adapter(g) && !g.module_copy;
}

bool targets_group(const std::vector<std::string>& t, const TensorGroup& g, bool experts_by_name) {
  const bool all = has(t, "all-linear");
  const bool attn = all || has(t, "attention");
  switch (g.role) {
    case Role::q:
      return attn || has(t, "q");
    case Role::k:
      return attn || has(t, "k");
    case Role::v:
      return attn || has(t, "v");
    case Role::o:
      return attn || has(t, "o");
    case Role::qkv:  // Phi-3's fused projection: naming it or any of q, k, v reaches it
      return attn || has(t, "qkv") || has(t, "q") || has(t, "k") || has(t, "v");
    case Role::q_a:
    case Role::q_b:
      return attn || has(t, "q") || has(t, role_name(g.role));
    case Role::kv_a:
    case Role::kv_b:
      return attn || has(t, "k") || has(t, "v") || has(t, role_name(g.role));
    case Role::gate:
      return mlp_target(t, g, "gate", experts_by_name);
    case Role::up:
      return mlp_target(t, g, "up", experts_by_name);
    case Role::gate_up:  // Phi-3's fused gate_up_proj
      return mlp_target(t, g, "gate_up", experts_by_name) ||
             mlp_target(t, g, "gate", experts_by_name) || mlp_target(t, g, "up", experts_by_name);
    case Role::down:
      return mlp_target(t, g, "down", experts_by_name);
    case Role::router:
    case Role::router_bias:
      return all || has(t, "router");
    case Role::shared_expert_gate:
      return all || has(t, "router") || has(t, "shared_experts");
    case Role::lm_head:
      return has(t, "lm_head");
    case Role::embedding:
      return has(t, "embed");
    case Role::position_embedding:
    case Role::attention_sinks:  // a parameter, not a module: no target_modules name reaches it
      return false;
    case Role::q_norm:
    case Role::k_norm:
    case Role::latent_norm:
    case Role::layer_norm:
    case Role::final_norm:
      return has(t, "norm");
  }
  return false;
}

std::int64_t lora_params(std::int64_t out, std::int64_t in, std::int64_t rank, bool dora) {
  return rank * (in + out) + (dora ? out : 0);
}

// A framework that builds its own lm_head beside a tied embedding (litgpt, FrameworkBehaviour
// unties_embeddings) holds one more V x h weight: the embedding's shape under the lm_head role.
static void untie_embeddings(const LoadedModel& model, ParameterInventory& inv) {
  if (auto head = head_of_tied_embedding(model.inventory)) inv.groups.push_back(std::move(*head));
}

ParameterInventory apply_method(const LoadedModel& model, const TrainingPlan& plan) {
  ParameterInventory inv = model.inventory;
  if (plan.behaviour.unties_embeddings && model.spec.tied_embeddings) untie_embeddings(model, inv);
  const Dtype weights = recipe(plan.precision).weights;
  const bool full = plan.method == Method::full;
  for (TensorGroup& g : inv.groups) {
    g.trainable = full && !g.mtp;
    g.dtype = weights;
    g.quantised = false;
  }
  switch (plan.method) {
    case Method::full:
      break;
    case Method::lora:
      add_adapters(model, plan, inv);
      add_module_copies(model, plan, inv);
      break;
    case Method::qlora:
      quantise_base(plan, inv);
      add_adapters(model, plan, inv);
      add_module_copies(model, plan, inv);
      break;
    case Method::freeze:
      apply_freeze(plan, inv);
      break;
  }
  return inv;
}

}  // namespace trainmem

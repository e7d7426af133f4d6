// From safetensors tensor names to inventory groups. The rules are a table of module names (the
// component before ".weight"/".bias") and the roles they play in the Hugging Face families
// trainmem knows; a name no rule knows is kept with the closest role and reported in a note.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "io/read_file.h"
#include "io/safetensors.h"
#include "model/inventory.h"
#include "model/model_spec.h"
#include "trainmem/model.h"
#include "trainmem/plan.h"
#include "util/json_text.h"

namespace trainmem::io {
namespace {

struct ModuleRule {
  std::string_view module;
  std::string_view parent;  // "" matches any parent
  Role role;
};

// First match wins, so parent-specific rules come before generic ones.
constexpr std::array<ModuleRule, 63> kRules{{
    {"c_proj", "attn", Role::o},  // GPT-2
    {"c_proj", "mlp", Role::down},
    {"head", "shared_head", Role::lm_head},  // DeepSeek MTP
    {"norm", "shared_head", Role::final_norm},
    {"gate", "mlp", Role::router},
    {"gate", "block_sparse_moe", Role::router},  // Mixtral
    {"gate", "moe", Role::router},
    {"embed_tokens", "", Role::embedding},
    {"wte", "", Role::embedding},
    {"word_embeddings", "", Role::embedding},
    {"tok_embeddings", "", Role::embedding},
    {"embed_in", "", Role::embedding},
    {"wpe", "", Role::position_embedding},
    {"embed_positions", "", Role::position_embedding},
    {"position_embeddings", "", Role::position_embedding},
    {"q_proj", "", Role::q},
    {"k_proj", "", Role::k},
    {"v_proj", "", Role::v},
    {"o_proj", "", Role::o},
    {"out_proj", "", Role::o},
    {"dense", "self_attn", Role::o},       // Phi
    {"dense", "attention", Role::o},       // GPT-NeoX
    {"dense", "self_attention", Role::o},  // Falcon
    {"dense_h_to_4h", "", Role::up},       // GPT-NeoX, Falcon
    {"dense_4h_to_h", "", Role::down},
    {"qkv_proj", "", Role::qkv},  // Phi-3
    {"c_attn", "", Role::qkv},    // GPT-2
    {"query_key_value", "", Role::qkv},
    {"Wqkv", "", Role::qkv},
    {"W_pack", "", Role::qkv},
    {"q_a_proj", "", Role::q_a},  // DeepSeek MLA
    {"q_b_proj", "", Role::q_b},
    {"kv_a_proj_with_mqa", "", Role::kv_a},
    {"kv_b_proj", "", Role::kv_b},
    {"q_a_layernorm", "", Role::latent_norm},
    {"kv_a_layernorm", "", Role::latent_norm},
    {"q_norm", "", Role::q_norm},
    {"k_norm", "", Role::k_norm},
    {"gate_proj", "", Role::gate},
    {"w1", "", Role::gate},  // Mixtral experts
    {"up_proj", "", Role::up},
    {"w3", "", Role::up},
    {"c_fc", "", Role::up},
    {"fc1", "", Role::up},
    {"eh_proj", "", Role::up},  // DeepSeek MTP, as inventory() files it
    {"gate_up_proj", "", Role::gate_up},
    {"down_proj", "", Role::down},
    {"w2", "", Role::down},
    {"fc2", "", Role::down},
    {"shared_expert_gate", "", Role::shared_expert_gate},
    {"input_layernorm", "", Role::layer_norm},
    {"post_attention_layernorm", "", Role::layer_norm},
    {"pre_feedforward_layernorm", "", Role::layer_norm},
    {"post_feedforward_layernorm", "", Role::layer_norm},
    {"ln_1", "", Role::layer_norm},
    {"ln_2", "", Role::layer_norm},
    {"enorm", "", Role::layer_norm},
    {"hnorm", "", Role::layer_norm},
    {"lm_head", "", Role::lm_head},
    {"embed_out", "", Role::lm_head},   // GPT-NeoX
    {"ln_attn", "", Role::layer_norm},  // Falcon new_decoder_architecture
    {"ln_mlp", "", Role::layer_norm},
    {"router", "", Role::router},  // gpt-oss
}};

// Final norms: a layer_norm inside a layer, the final norm outside one.
bool is_norm_name(std::string_view m) {
  return m == "norm" || m == "ln_f" || m == "final_layernorm" || m == "final_layer_norm" ||
         m == "norm_f";
}

std::optional<Role> rule_role(std::string_view module, std::string_view parent, bool in_layer) {
  for (const ModuleRule& r : kRules) {
    if (r.module == module && (r.parent.empty() || r.parent == parent)) return r.role;
  }
  if (is_norm_name(module)) return in_layer ? Role::layer_norm : Role::final_norm;
  return std::nullopt;
}

// The closest role for a name no rule knows: by words in the module name, else by shape.
Role closest_role(std::string_view module, std::size_t rank, bool in_layer) {
  auto has = [&](std::string_view w) { return module.find(w) != std::string_view::npos; };
  if (has("norm") || has("ln")) return in_layer ? Role::layer_norm : Role::final_norm;
  if (has("embed")) return Role::embedding;
  if (has("head")) return Role::lm_head;
  if (has("router")) return Role::router;
  if (has("gate")) return Role::gate;
  if (has("down")) return Role::down;
  if (has("up")) return Role::up;
  if (!in_layer) return rank >= 2 ? Role::embedding : Role::final_norm;
  return rank >= 2 ? Role::up : Role::layer_norm;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// One tensor after the name rules.
struct Mapped {
  std::string pattern;  // name with the layer index as "{L}" and expert indices as "*"
  Role role = Role::embedding;
  ExpertKind expert = ExpertKind::none;
  bool is_bias = false;
  std::vector<std::int64_t> shape;
  Dtype dtype = Dtype::bf16;
  bool mtp = false;
  std::int64_t layer = -1;
  bool unknown = false;
  std::string skip_reason;  // non-empty: a buffer, not a parameter
};

Mapped map_one(const SafetensorsTensor& t, const ModelSpec& spec) {
  Mapped m;
  m.shape = t.shape;
  m.dtype = t.dtype;
  std::vector<std::string> parts;
  std::stringstream ss(t.name);
  for (std::string part; std::getline(ss, part, '.');) parts.push_back(part);

  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (i > 0 && all_digits(p) && p.size() < 10) {
      const std::string& before = parts[i - 1];
      if (m.layer < 0 &&
          (before == "layers" || before == "h" || before == "blocks" || before == "layer")) {
        m.layer = std::stoll(p);
        parts[i] = "{L}";
      } else if (before == "experts") {
        parts[i] = "*";
      }
    }
    if (p == "experts" && m.expert == ExpertKind::none) m.expert = ExpertKind::routed;
    if (p == "shared_experts" || p == "shared_expert" || p == "shared_mlp") {
      m.expert = ExpertKind::shared;
    }
  }
  for (std::size_t i = 0; i < parts.size(); ++i) m.pattern += (i ? "." : "") + parts[i];
  // Only a model with next-token-prediction layers (DeepSeek-V3 num_nextn_predict_layers) stores
  // layers after the last decoder layer; anywhere else such a layer is a mismatch.
  m.mtp = spec.mtp_layers > 0 && m.layer >= spec.layers && m.layer < spec.layers + spec.mtp_layers;
  const bool in_layer = m.layer >= 0;

  const std::string& last = parts.back();
  const std::string module = parts.size() >= 2 ? parts[parts.size() - 2] : "";
  const std::string parent = parts.size() >= 3 ? parts[parts.size() - 3] : "";

  // Buffers that checkpoints carry but that are not parameters.
  if (last == "inv_freq" || last == "masked_bias") {
    m.skip_reason = "a buffer, not a parameter";
  } else if (last == "bias" && module == "attn" && t.shape.size() == 4) {
    m.skip_reason = "GPT-2's causal-mask buffer, not a parameter";
  } else if (ends_with(last, "_scale_inv") || ends_with(last, "_scale")) {
    m.skip_reason = "a quantisation scale, not a parameter";
  }
  if (!m.skip_reason.empty()) return m;

  if (last == "e_score_correction_bias") {
    m.role = Role::router_bias;
    return m;
  }
  if (last == "sinks") {  // gpt-oss self_attn.sinks, a parameter of the attention module
    m.role = Role::attention_sinks;
    return m;
  }
  // Experts stored fused as parameters of the experts module, [experts, ...] (gpt-oss
  // GptOssExperts gate_up_proj, gate_up_proj_bias, down_proj, down_proj_bias).
  if (module == "experts") {
    const bool bias = ends_with(last, "_bias");
    const std::string_view base =
        bias ? std::string_view(last).substr(0, last.size() - 5) : std::string_view(last);
    if (auto role = rule_role(base, "", in_layer)) {
      m.role = *role;
      m.is_bias = bias;
      return m;
    }
  }
  if (last == "weight" || last == "bias") {
    m.is_bias = last == "bias";
    if (auto role = rule_role(module, parent, in_layer)) {
      m.role = *role;
    } else {
      m.unknown = true;
      m.role = closest_role(module, t.shape.size(), in_layer);
    }
  } else {
    // An unknown suffix (qweight, absmax, ...): the nearest enclosing module that a rule knows.
    m.unknown = true;
    std::optional<Role> role;
    for (std::size_t i = parts.size() - 1; i-- > 0 && !role;) {
      role = rule_role(parts[i], i > 0 ? parts[i - 1] : "", in_layer);
    }
    m.role = role ? *role : closest_role(module, t.shape.size(), in_layer);
  }
  // GPT-2's Conv1D stores weights [in, out]; the inventory's linear weights are [out, in].
  const bool conv1d = module == "c_attn" || module == "c_fc" || module == "c_proj";
  if (conv1d && !m.is_bias && m.shape.size() == 2 &&
      (spec.model_type == "gpt2" || spec.model_type.empty())) {
    std::swap(m.shape[0], m.shape[1]);
  }
  return m;
}

std::string group_key(const Mapped& m) {
  std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|", m.pattern, static_cast<int>(m.role),
                  static_cast<int>(m.expert), m.is_bias, static_cast<int>(m.dtype), m.mtp);
  for (std::int64_t d : m.shape) key += std::to_string(d) + ",";
  return key;
}

std::string layer_label(std::int64_t first, std::int64_t last) {
  return first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(names.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += fmt::format(" and {} more", names.size() - shown);
  return out;
}

// Quantisers whose checkpoints store each weight at its own shape (fp8 with block scales, which
// map_one skips); every other one packs weights into other shapes (bitsandbytes' [n/2, 1] uint8,
// GPTQ/AWQ qweight int32), whose headers say nothing of the parameter shapes.
bool keeps_weight_shapes(const std::string& quant_method) {
  return quant_method == "fp8" || quant_method == "fbgemm_fp8";
}

}  // namespace

TensorMapping map_tensors(const std::vector<SafetensorsTensor>& tensors, const ModelSpec& spec) {
  TensorMapping out;
  if (spec.checkpoint_quant && !keeps_weight_shapes(spec.checkpoint_quant->method)) {
    out.inventory = inventory(spec);
    out.notes.push_back(fmt::format(
        "the safetensors hold {}-packed weights (config.json quantization_config), so the "
        "parameter shapes come from config.json",
        spec.checkpoint_quant->method));
    return out;
  }
  std::vector<Mapped> mapped;
  mapped.reserve(tensors.size());
  const bool has_embedding = std::any_of(tensors.begin(), tensors.end(), [&](const auto& t) {
    return map_one(t, spec).role == Role::embedding;
  });
  std::map<std::string, std::vector<std::string>> skipped;  // reason -> patterns
  std::vector<std::string> unknown_patterns;
  // Which of config.json's layers some tensor belongs to (bounded by check_common's limit).
  std::vector<bool> layer_seen(
      static_cast<std::size_t>(std::clamp<std::int64_t>(spec.layers, 0, kMaxLayers)));
  for (const SafetensorsTensor& t : tensors) {
    Mapped m = map_one(t, spec);
    if (m.layer >= 0 && m.layer < static_cast<std::int64_t>(layer_seen.size())) {
      layer_seen[static_cast<std::size_t>(m.layer)] = true;
    }
    if (m.layer >= spec.layers + spec.mtp_layers && m.layer > out.layer_past_config) {
      out.layer_past_config = m.layer;
      out.layer_past_config_name = t.name;
    }
    if (m.skip_reason.empty() && spec.tied_embeddings && m.role == Role::lm_head && m.layer < 0 &&
        has_embedding) {
      m.skip_reason = "tied to the embedding (stored twice, one parameter)";
    }
    if (!m.skip_reason.empty()) {
      ++out.skipped_tensors;
      auto& list = skipped[m.skip_reason];
      if (std::find(list.begin(), list.end(), m.pattern) == list.end()) list.push_back(m.pattern);
      continue;
    }
    if (m.unknown) {
      ++out.unknown_tensors;
      const std::string label = fmt::format("{} ({})", m.pattern, role_name(m.role));
      if (std::find(unknown_patterns.begin(), unknown_patterns.end(), label) ==
          unknown_patterns.end()) {
        unknown_patterns.push_back(label);
      }
    }
    mapped.push_back(std::move(m));
  }

  const auto missing = std::find(layer_seen.begin(), layer_seen.end(), false);
  if (missing != layer_seen.end()) out.layer_missing = missing - layer_seen.begin();

  // Group by key, then split each key's layers into runs of consecutive layers.
  std::map<std::string, std::vector<const Mapped*>> by_key;
  for (const Mapped& m : mapped) by_key[group_key(m)].push_back(&m);
  auto section = [](const TensorGroup& g) {
    if (g.layer_first >= 0) return 1;
    return (g.role == Role::embedding || g.role == Role::position_embedding) ? 0 : 2;
  };
  for (auto& [key, members] : by_key) {
    std::stable_sort(members.begin(), members.end(),
                     [](const Mapped* a, const Mapped* b) { return a->layer < b->layer; });
    std::size_t i = 0;
    while (i < members.size()) {
      std::size_t j = i + 1;
      while (j < members.size() && members[j]->layer - members[j - 1]->layer <= 1) ++j;
      const Mapped& first = *members[i];
      TensorGroup g;
      g.role = first.role;
      g.expert = first.expert;
      g.is_bias = first.is_bias;
      g.shape = first.shape;
      g.multiplicity = static_cast<std::int64_t>(j - i);
      g.layer_first = first.layer;
      g.layer_last = members[j - 1]->layer;
      g.mtp = first.mtp;
      g.dtype = first.dtype;
      g.name = first.pattern;
      const auto at = g.name.find("{L}");
      if (at != std::string::npos) {
        g.name.replace(at, 3, layer_label(g.layer_first, g.layer_last));
      }
      out.inventory.groups.push_back(std::move(g));
      i = j;
    }
  }
  std::stable_sort(out.inventory.groups.begin(), out.inventory.groups.end(),
                   [&](const TensorGroup& a, const TensorGroup& b) {
                     if (section(a) != section(b)) return section(a) < section(b);
                     return a.layer_first < b.layer_first;
                   });

  for (const auto& [reason, patterns] : skipped) {
    out.notes.push_back(
        fmt::format("left out of the parameter count, {}: {}", reason, list_names(patterns)));
  }
  if (!unknown_patterns.empty()) {
    out.notes.push_back(
        fmt::format("{} tensors with names trainmem does not know, kept with the "
                    "closest role: {}",
                    out.unknown_tensors, list_names(unknown_patterns)));
  }
  return out;
}

ParameterInventory inventory_from_tensors(const std::vector<SafetensorsTensor>& tensors,
                                          const ModelSpec& spec) {
  return map_tensors(tensors, spec).inventory;
}

// The token embedding's [vocab, hidden] against config.json's vocab_size and hidden_size: the
// estimate takes the widths from the config (the logits, every activation), so a folder whose
// headers say otherwise would be priced for a model it does not hold. transformers' from_pretrained
// refuses the same folder ("size mismatch for model.embed_tokens.weight", modeling_utils.py
// _find_mismatched_keys). Only a plain floating-point 2-D embedding is compared: quantised
// layouts pack their shapes.
std::optional<Error> check_headers_against_config(const std::vector<SafetensorsTensor>& tensors,
                                                  const TensorMapping& mapping,
                                                  const ModelSpec& spec, const std::string& where) {
  if (mapping.layer_past_config >= 0) {
    return bad_input(
        where, "num_hidden_layers",
        fmt::format("the safetensors headers and config.json disagree: tensor {} is in layer {}, "
                    "but config.json has {} layers{}",
                    text_excerpt(mapping.layer_past_config_name), mapping.layer_past_config,
                    spec.layers,
                    spec.mtp_layers > 0
                        ? fmt::format(" and {} next-token-prediction layers", spec.mtp_layers)
                        : ""));
  }
  static constexpr std::array<std::string_view, 5> kEmbeddings = {
      "embed_tokens.weight", "wte.weight", "word_embeddings.weight", "tok_embeddings.weight",
      "embed_in.weight"};
  for (const SafetensorsTensor& t : tensors) {
    const bool embedding = std::any_of(kEmbeddings.begin(), kEmbeddings.end(), [&](auto suffix) {
      return t.name == suffix || t.name.ends_with("." + std::string(suffix));
    });
    const bool floating = t.dtype_name == "F32" || t.dtype_name == "F16" || t.dtype_name == "BF16";
    if (!embedding || !floating || t.shape.size() != 2) continue;
    const bool vocab_differs = spec.vocab > 0 && t.shape[0] != spec.vocab;
    if (t.shape[1] == spec.hidden && !vocab_differs) continue;
    const bool width = t.shape[1] != spec.hidden;
    return bad_input(
        where, width ? "hidden_size" : "vocab_size",
        fmt::format("the safetensors headers and config.json disagree: {} is [{}, {}], "
                    "but config.json has vocab_size {} and hidden_size {}",
                    text_excerpt(t.name), t.shape[0], t.shape[1], spec.vocab, spec.hidden));
  }
  // The dense MLP's and attention's widths against config.json (transformers refuses a
  // mismatch as it does the embedding's): activations follow the config, weights the headers,
  // so a disagreement would price two different models at once.
  for (const TensorGroup& g : mapping.inventory.groups) {
    if (g.is_bias || g.shape.size() != 2 || g.expert != ExpertKind::none || g.layer_first < 0 ||
        g.mtp || spec.mla || is_moe_layer(spec, g.layer_first)) {
      continue;
    }
    const std::int64_t out = g.shape[0];
    const std::int64_t in = g.shape[1];
    std::optional<std::pair<std::string, std::int64_t>> expected;  // (which width, its size)
    std::int64_t got = 0;
    switch (g.role) {
      case Role::gate:
      case Role::up:
        if (out != spec.intermediate)
          expected = {"intermediate_size", spec.intermediate}, got = out;
        break;
      case Role::down:
        if (in != spec.intermediate) expected = {"intermediate_size", spec.intermediate}, got = in;
        break;
      case Role::q:
      case Role::k:
      case Role::v:
      case Role::qkv:
        if (in != spec.hidden) expected = {"hidden_size", spec.hidden}, got = in;
        break;
      case Role::o:
        if (out != spec.hidden) expected = {"hidden_size", spec.hidden}, got = out;
        break;
      default:
        break;
    }
    if (expected) {
      return bad_input(
          where, expected->first,
          fmt::format("the safetensors headers and config.json disagree: {} is [{}, "
                      "{}], a width of {} where config.json has {} {}",
                      text_excerpt(g.name), out, in, got, expected->first, expected->second));
    }
  }
  // transformers loads such a folder with the missing weights freshly initialised (and a warning
  // that they are "newly initialized"), so its memory is the whole model's; pricing what the
  // headers hold would be a smaller model (a shard missing, or a partial download).
  if (mapping.layer_missing >= 0) {
    return bad_input(
        where, "num_hidden_layers",
        fmt::format("the safetensors headers hold no tensor of layer {}, but config.json has {} "
                    "layers: a shard is missing (model.safetensors.index.json names them all) or "
                    "the folder holds part of the model; price the config.json alone for the whole "
                    "model",
                    mapping.layer_missing, spec.layers));
  }
  return std::nullopt;
}

Result<LoadedModel> load_safetensors_model(const std::filesystem::path& dir, SourceKind kind) {
  const std::filesystem::path config = dir / "config.json";
  std::error_code ec;
  if (!std::filesystem::exists(config, ec) && !describe_non_file(config)) {
    return Error{ErrorCode::not_found, config.string(), "",
                 "no config.json beside the safetensors files (trainmem needs the architecture)"};
  }
  auto text = read_regular_file(config, kMaxConfigBytes, "a config.json");
  if (!text) return text.error();
  auto spec = spec_from_config_text(text.value(), config.string());
  if (!spec) return spec.error();
  auto tensors = read_safetensors_folder(dir);
  if (!tensors) return tensors.error();
  LoadedModel model;
  if (tensors->empty()) {
    return bad_input(dir.string(), "", "the safetensors files hold no tensors (empty headers)");
  }
  TensorMapping mapping = map_tensors(*tensors, *spec);
  if (auto e = check_headers_against_config(*tensors, mapping, *spec, dir.string())) return *e;
  model.inventory = std::move(mapping.inventory);
  model.notes = std::move(mapping.notes);
  model.spec = std::move(spec).value();
  if (model.spec.name.empty()) model.spec.name = dir.filename().string();
  model.source = kind;
  model.source_detail = dir.string();
  return model;
}

}  // namespace trainmem::io

// The exact tensor list of a Hugging Face decoder, generated from ModelSpec flags. Each block
// (embeddings, attention, MLA, MLP, MoE, norms, head) is one small function; families differ only
// in the flags their adapter sets. Shapes follow transformers' modeling files:
// models/llama/modeling_llama.py (LlamaAttention, LlamaMLP), qwen2 (q/k/v bias), qwen3 (q_norm,
// k_norm), qwen3_moe and mixtral (router + experts), gemma2 (four norms), phi3 (qkv_proj,
// gate_up_proj), gpt2 (Conv1D with biases, learned positions), deepseek_v3 (MLA, shared experts,
// dense first layers, e_score_correction_bias, MTP layers stored after the last layer).
#include "model/inventory.h"

#include <fmt/format.h>

#include <array>

#include "model/model_spec.h"
#include "trainmem/model.h"
#include "util/checked.h"

namespace trainmem {
namespace {

struct Span {
  std::int64_t first;
  std::int64_t last;
  bool mtp;
  std::int64_t count() const { return last - first + 1; }
};

class Builder {
 public:
  Builder(const ModelSpec& spec, ParameterInventory& inv) : spec_(spec), inv_(inv) {}

  void add(std::string name, Role role, std::vector<std::int64_t> shape, std::int64_t count,
           const Span* span, ExpertKind expert = ExpertKind::none, bool bias = false) {
    TensorGroup g;
    g.name = span ? fmt::format("model.layers.{}.{}", span_label(*span), name) : std::move(name);
    g.role = role;
    g.expert = expert;
    g.is_bias = bias;
    g.shape = std::move(shape);
    g.multiplicity = count;
    g.layer_first = span ? span->first : -1;
    g.layer_last = span ? span->last : -1;
    g.mtp = span ? span->mtp : false;
    g.dtype = spec_.storage_dtype;
    inv_.groups.push_back(std::move(g));
  }

  // A linear layer [out, in], with an optional bias [out].
  void linear(const std::string& name, Role role, std::int64_t out, std::int64_t in, bool with_bias,
              std::int64_t count, const Span& span, ExpertKind expert = ExpertKind::none) {
    add(name + ".weight", role, {out, in}, count, &span, expert);
    if (with_bias) add(name + ".bias", role, {out}, count, &span, expert, true);
  }

  void norm(const std::string& name, Role role, std::int64_t width, std::int64_t count,
            const Span* span) {
    add(name + ".weight", role, {width}, count, span);
    if (spec_.norm == NormKind::layer_norm)
      add(name + ".bias", role, {width}, count, span, {}, true);
  }

 private:
  static std::string span_label(const Span& s) {
    return s.first == s.last ? std::to_string(s.first) : fmt::format("{}-{}", s.first, s.last);
  }
  const ModelSpec& spec_;
  ParameterInventory& inv_;
};

void add_attention(const ModelSpec& s, Builder& b, const Span& span) {
  const std::int64_t n = span.count();
  const std::int64_t q_out = s.heads * s.head_dim;
  const std::int64_t kv_out = s.kv_heads * s.head_dim;
  if (s.fused_qkv) {
    b.linear("self_attn.qkv_proj", Role::qkv, q_out + 2 * kv_out, s.hidden, s.qkv_bias, n, span);
  } else {
    b.linear("self_attn.q_proj", Role::q, q_out, s.hidden, s.qkv_bias, n, span);
    b.linear("self_attn.k_proj", Role::k, kv_out, s.hidden, s.qkv_bias, n, span);
    b.linear("self_attn.v_proj", Role::v, kv_out, s.hidden, s.qkv_bias, n, span);
  }
  b.linear("self_attn.o_proj", Role::o, s.hidden, q_out, s.o_bias, n, span);
  if (s.attention_sinks) b.add("self_attn.sinks", Role::attention_sinks, {s.heads}, n, &span);
  // q/k norms take the model's norm kind (LayerNorm with bias in Phi, RMSNorm in Qwen3/OLMo-2).
  switch (s.qk_norm) {
    case QkNorm::none:
      break;
    case QkNorm::per_head:
      b.norm("self_attn.q_norm", Role::q_norm, s.head_dim, n, &span);
      b.norm("self_attn.k_norm", Role::k_norm, s.head_dim, n, &span);
      break;
    case QkNorm::per_head_weights:  // CohereLayerNorm((heads, head_dim)): a weight per head
      b.norm("self_attn.q_norm", Role::q_norm, q_out, n, &span);
      b.norm("self_attn.k_norm", Role::k_norm, kv_out, n, &span);
      break;
    case QkNorm::full_width:  // OLMo-2: RMSNorm(heads x head_dim) on the projection output
      b.norm("self_attn.q_norm", Role::q_norm, q_out, n, &span);
      b.norm("self_attn.k_norm", Role::k_norm, kv_out, n, &span);
      break;
  }
}

// DeepSeek-V3 multi-head latent attention (DeepseekV3Attention.__init__).
void add_mla(const ModelSpec& s, Builder& b, const Span& span) {
  const std::int64_t n = span.count();
  const MlaSpec& m = s.mla_spec;
  const std::int64_t q_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.q_lora_rank > 0) {
    b.linear("self_attn.q_a_proj", Role::q_a, m.q_lora_rank, s.hidden, false, n, span);
    b.add("self_attn.q_a_layernorm.weight", Role::latent_norm, {m.q_lora_rank}, n, &span);
    b.linear("self_attn.q_b_proj", Role::q_b, s.heads * q_head, m.q_lora_rank, false, n, span);
  } else {
    b.linear("self_attn.q_proj", Role::q, s.heads * q_head, s.hidden, false, n, span);
  }
  b.linear("self_attn.kv_a_proj_with_mqa", Role::kv_a, m.kv_lora_rank + m.qk_rope_head_dim,
           s.hidden, false, n, span);
  b.add("self_attn.kv_a_layernorm.weight", Role::latent_norm, {m.kv_lora_rank}, n, &span);
  b.linear("self_attn.kv_b_proj", Role::kv_b, s.heads * (m.qk_nope_head_dim + m.v_head_dim),
           m.kv_lora_rank, false, n, span);
  b.linear("self_attn.o_proj", Role::o, s.hidden, s.heads * m.v_head_dim, false, n, span);
}

// One MLP of width `width`, `copies` times per layer (experts), in every layer of the span.
void add_mlp(const ModelSpec& s, Builder& b, const Span& span, const std::string& prefix,
             std::int64_t width, std::int64_t copies, ExpertKind expert) {
  const std::int64_t n = span.count() * copies;
  if (s.mlp == MlpKind::plain) {
    b.linear(prefix + ".c_fc", Role::up, width, s.hidden, s.mlp_bias, n, span, expert);
    b.linear(prefix + ".c_proj", Role::down, s.hidden, width, s.mlp_bias, n, span, expert);
    return;
  }
  if (s.fused_qkv && s.fused_mlp) {
    b.linear(prefix + ".gate_up_proj", Role::gate_up, 2 * width, s.hidden, s.mlp_bias, n, span,
             expert);
  } else {
    b.linear(prefix + ".gate_proj", Role::gate, width, s.hidden, s.mlp_bias, n, span, expert);
    b.linear(prefix + ".up_proj", Role::up, width, s.hidden, s.mlp_bias, n, span, expert);
  }
  b.linear(prefix + ".down_proj", Role::down, s.hidden, width, s.mlp_bias, n, span, expert);
}

void add_moe(const ModelSpec& s, Builder& b, const Span& span) {
  const MoeSpec& m = s.moe;
  const std::int64_t n = span.count();
  b.linear("mlp.gate", Role::router, m.experts, s.hidden, m.router_bias, n, span);
  if (m.router_score_bias) {
    b.add("mlp.gate.e_score_correction_bias", Role::router_bias, {m.experts}, n, &span);
  }
  add_mlp(s, b, span, "mlp.experts.*", m.expert_intermediate, m.experts, ExpertKind::routed);
  if (m.shared_experts > 0) {
    add_mlp(s, b, span, "mlp.shared_experts", m.shared_intermediate, 1, ExpertKind::shared);
    if (m.shared_expert_gate) {
      b.linear("mlp.shared_expert_gate", Role::shared_expert_gate, 1, s.hidden, false, n, span);
    }
  }
}

void add_layers(const ModelSpec& s, Builder& b, const Span& span, bool moe) {
  const std::int64_t n = span.count();
  if (s.parallel_block) {
    // One norm shared by attention and MLP (Phi, Cohere, Falcon-7B) or one each (GPT-NeoX,
    // Falcon new_decoder_architecture's ln_attn and ln_mlp).
    b.norm("input_layernorm", Role::layer_norm, s.hidden, n, &span);
    if (s.parallel_norms == 2)
      b.norm("post_attention_layernorm", Role::layer_norm, s.hidden, n, &span);
  } else {
    switch (s.norm_placement) {
      case NormPlacement::pre:
        b.norm("input_layernorm", Role::layer_norm, s.hidden, n, &span);
        b.norm("post_attention_layernorm", Role::layer_norm, s.hidden, n, &span);
        break;
      case NormPlacement::sandwich:  // Gemma 2/3: four norms
        b.norm("input_layernorm", Role::layer_norm, s.hidden, n, &span);
        b.norm("post_attention_layernorm", Role::layer_norm, s.hidden, n, &span);
        b.norm("pre_feedforward_layernorm", Role::layer_norm, s.hidden, n, &span);
        b.norm("post_feedforward_layernorm", Role::layer_norm, s.hidden, n, &span);
        break;
      case NormPlacement::post:  // OLMo-2: norms on the sublayer outputs only
        b.norm("post_attention_layernorm", Role::layer_norm, s.hidden, n, &span);
        b.norm("post_feedforward_layernorm", Role::layer_norm, s.hidden, n, &span);
        break;
    }
  }
  if (s.mla) {
    add_mla(s, b, span);
  } else {
    add_attention(s, b, span);
  }
  if (moe) {
    add_moe(s, b, span);
  } else {
    add_mlp(s, b, span, "mlp", s.intermediate, 1, ExpertKind::none);
  }
}

// DeepSeek-V3's MTP module per extra layer: a full decoder layer plus enorm, hnorm, eh_proj, a
// shared-head norm, and its own copies of the embedding and output head in the checkpoint.
void add_mtp_extras(const ModelSpec& s, Builder& b, const Span& span) {
  const std::int64_t n = span.count();
  b.add("enorm.weight", Role::layer_norm, {s.hidden}, n, &span);
  b.add("hnorm.weight", Role::layer_norm, {s.hidden}, n, &span);
  b.linear("eh_proj", Role::up, s.hidden, 2 * s.hidden, false, n, span);
  b.add("shared_head.norm.weight", Role::final_norm, {s.hidden}, n, &span);
  b.add("embed_tokens.weight", Role::embedding, {s.vocab, s.hidden}, n, &span);
  b.add("shared_head.head.weight", Role::lm_head, {s.vocab, s.hidden}, n, &span);
}

}  // namespace

ParameterInventory inventory(const ModelSpec& spec) {
  ParameterInventory inv;
  Builder b(spec, inv);
  b.add("model.embed_tokens.weight", Role::embedding, {spec.vocab, spec.hidden}, 1, nullptr);
  if (spec.learned_positions) {
    b.add("model.embed_positions.weight", Role::position_embedding,
          {spec.max_positions, spec.hidden}, 1, nullptr);
  }
  // Consecutive layers of the same kind (dense or MoE) share one group per tensor.
  std::int64_t first = 0;
  for (std::int64_t layer = 1; layer <= spec.layers; ++layer) {
    const bool moe = is_moe_layer(spec, first);
    if (layer == spec.layers || is_moe_layer(spec, layer) != moe) {
      add_layers(spec, b, Span{first, layer - 1, false}, moe);
      first = layer;
    }
  }
  if (spec.mtp_layers > 0) {
    const Span mtp{spec.layers, spec.layers + spec.mtp_layers - 1, true};
    add_layers(spec, b, mtp, spec.moe.experts > 0);
    add_mtp_extras(spec, b, mtp);
  }
  b.norm("model.norm", Role::final_norm, spec.hidden, 1, nullptr);
  if (!spec.tied_embeddings) {
    b.add("lm_head.weight", Role::lm_head, {spec.vocab, spec.hidden}, 1, nullptr);
  }
  if (spec.lm_head_bias) {  // Phi: nn.Linear(hidden, vocab, bias=True), kept when tied
    b.add("lm_head.bias", Role::lm_head, {spec.vocab}, 1, nullptr, ExpertKind::none, true);
  }
  return inv;
}

std::int64_t tensor_elements(const TensorGroup& group) {
  std::int64_t n = 1;
  for (std::int64_t d : group.shape) n = sat_mul(n, d);
  return n;
}

std::int64_t group_params(const TensorGroup& group) {
  return sat_mul(tensor_elements(group), group.multiplicity);
}

bool is_linear_weight(const TensorGroup& g) {
  if (g.is_bias || g.shape.size() != 2) return false;
  switch (g.role) {
    case Role::q:
    case Role::k:
    case Role::v:
    case Role::o:
    case Role::qkv:
    case Role::q_a:
    case Role::q_b:
    case Role::kv_a:
    case Role::kv_b:
    case Role::gate:
    case Role::up:
    case Role::gate_up:
    case Role::down:
    case Role::router:
    case Role::shared_expert_gate:
    case Role::lm_head:
      return true;
    case Role::embedding:
    case Role::position_embedding:
    case Role::q_norm:
    case Role::k_norm:
    case Role::latent_norm:
    case Role::attention_sinks:
    case Role::router_bias:
    case Role::layer_norm:
    case Role::final_norm:
      return false;
  }
  return false;
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::embedding:
      return "embedding";
    case Role::position_embedding:
      return "position_embedding";
    case Role::q:
      return "q";
    case Role::k:
      return "k";
    case Role::v:
      return "v";
    case Role::o:
      return "o";
    case Role::qkv:
      return "qkv";
    case Role::q_a:
      return "q_a";
    case Role::q_b:
      return "q_b";
    case Role::kv_a:
      return "kv_a";
    case Role::kv_b:
      return "kv_b";
    case Role::q_norm:
      return "q_norm";
    case Role::k_norm:
      return "k_norm";
    case Role::latent_norm:
      return "latent_norm";
    case Role::attention_sinks:
      return "sinks";
    case Role::gate:
      return "gate";
    case Role::up:
      return "up";
    case Role::gate_up:
      return "gate_up";
    case Role::down:
      return "down";
    case Role::router:
      return "router";
    case Role::router_bias:
      return "router_bias";
    case Role::shared_expert_gate:
      return "shared_expert_gate";
    case Role::layer_norm:
      return "norm";
    case Role::final_norm:
      return "final_norm";
    case Role::lm_head:
      return "lm_head";
  }
  return "";
}

std::int64_t params_total(const ParameterInventory& inv) {
  std::int64_t n = 0;
  for (const TensorGroup& g : inv.groups) n = sat_add(n, g.mtp ? 0 : group_params(g));
  return n;
}

std::int64_t params_trainable(const ParameterInventory& inv) {
  std::int64_t n = 0;
  for (const TensorGroup& g : inv.groups)
    n = sat_add(n, (g.trainable && !g.mtp) ? group_params(g) : 0);
  return n;
}

std::int64_t params_mtp(const ParameterInventory& inv) {
  std::int64_t n = 0;
  for (const TensorGroup& g : inv.groups) n = sat_add(n, g.mtp ? group_params(g) : 0);
  return n;
}

std::int64_t params_active(const ParameterInventory& inv, const ModelSpec& spec) {
  std::int64_t n = 0;
  for (const TensorGroup& g : inv.groups) {
    if (g.mtp) continue;
    if (g.expert == ExpertKind::routed && spec.moe.experts > 0) {
      n = sat_add(n, sat_mul(group_params(g) / spec.moe.experts, spec.moe.top_k));
    } else {
      n = sat_add(n, group_params(g));
    }
  }
  return n;
}

std::int64_t params_non_embedding(const ParameterInventory& inv) {
  std::int64_t n = 0;
  for (const TensorGroup& g : inv.groups) {
    // Model cards' "non-embedding" count leaves out the token/position tables and the head.
    const bool embedding =
        g.role == Role::embedding || g.role == Role::position_embedding || g.role == Role::lm_head;
    n = sat_add(n, (g.mtp || embedding) ? 0 : group_params(g));
  }
  return n;
}

}  // namespace trainmem

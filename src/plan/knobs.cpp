// The knobs of FrameworkBehaviour in one table: each knob's name (as the framework table, the
// plan JSON and docs/frameworks.md spell it), how its value is read and how it is set. The
// framework profiles (framework.cpp) set knobs by this table; plan JSON writes and reads them by
// it, so a knob added to FrameworkBehaviour needs one row here and nothing else.
#include <array>

#include "plan/framework.h"

namespace trainmem {
namespace {

template <bool FrameworkBehaviour::*M>
std::int64_t get_flag(const FrameworkBehaviour& b) {
  return b.*M ? 1 : 0;
}
template <bool FrameworkBehaviour::*M>
void set_flag(FrameworkBehaviour& b, std::int64_t v) {
  b.*M = v != 0;
}
template <std::int64_t FrameworkBehaviour::*M>
std::int64_t get_count(const FrameworkBehaviour& b) {
  return b.*M;
}
template <std::int64_t FrameworkBehaviour::*M>
void set_count(FrameworkBehaviour& b, std::int64_t v) {
  b.*M = v;
}
std::int64_t get_load_quantiser(const FrameworkBehaviour& b) {
  return static_cast<std::int64_t>(b.load_quantiser);
}
void set_load_quantiser(FrameworkBehaviour& b, std::int64_t v) {
  b.load_quantiser = static_cast<LoadQuantiser>(v);
}

template <bool FrameworkBehaviour::*M>
constexpr KnobInfo flag(Knob k, std::string_view name) {
  return {k, name, KnobKind::flag, &get_flag<M>, &set_flag<M>};
}
template <std::int64_t FrameworkBehaviour::*M>
constexpr KnobInfo count(Knob k, std::string_view name) {
  return {k, name, KnobKind::count, &get_count<M>, &set_count<M>};
}

using B = FrameworkBehaviour;
constexpr std::array kKnobs{
    flag<&B::outputs_kept>(Knob::outputs_kept, "outputs_kept"),
    flag<&B::fp32_logits_in_model>(Knob::fp32_logits_in_model, "fp32_logits_in_model"),
    flag<&B::loss_shift_copy>(Knob::loss_shift_copy, "loss_shift_copy"),
    flag<&B::loss_upcast>(Knob::loss_upcast, "loss_upcast"),
    count<&B::loss_chunks>(Knob::loss_chunks, "loss_chunks"),
    count<&B::loss_chunk_positions>(Knob::loss_chunk_positions, "loss_chunk_positions"),
    flag<&B::logits_freed_after_loss>(Knob::logits_freed_after_loss, "logits_freed_after_loss"),
    flag<&B::adapters_fp32>(Knob::adapters_fp32, "adapters_fp32"),
    flag<&B::optimizer_in_backward>(Knob::optimizer_in_backward, "optimizer_in_backward"),
    flag<&B::offload_checkpoints>(Knob::offload_checkpoints, "offload_checkpoints"),
    flag<&B::bnb_saves_4bit_input>(Knob::bnb_saves_4bit_input, "bnb_saves_4bit_input"),
    flag<&B::padding_mask>(Knob::padding_mask, "padding_mask"),
    flag<&B::metrics_logits_copy>(Knob::metrics_logits_copy, "metrics_logits_copy"),
    flag<&B::fused_qkv_attention>(Knob::fused_qkv_attention, "fused_qkv_attention"),
    flag<&B::unties_embeddings>(Knob::unties_embeddings, "unties_embeddings"),
    flag<&B::cublas_workspaces>(Knob::cublas_workspaces, "cublas_workspaces"),
    flag<&B::unified_memory>(Knob::unified_memory, "unified_memory"),
    count<&B::lora_last_layers>(Knob::lora_last_layers, "lora_last_layers"),
    flag<&B::eval_between_steps>(Knob::eval_between_steps, "eval_between_steps"),
    flag<&B::generates_sample>(Knob::generates_sample, "generates_sample"),
    KnobInfo{Knob::load_quantiser, "load_quantiser", KnobKind::load_quantiser, &get_load_quantiser,
             &set_load_quantiser},
    flag<&B::quantises_lm_head>(Knob::quantises_lm_head, "quantises_lm_head"),
    flag<&B::experts_as_linears>(Knob::experts_as_linears, "experts_as_linears"),
    flag<&B::quantises_fused_experts>(Knob::quantises_fused_experts, "quantises_fused_experts"),
    flag<&B::compiled_loss>(Knob::compiled_loss, "compiled_loss"),
    flag<&B::compiled_layers>(Knob::compiled_layers, "compiled_layers"),
    flag<&B::kv_cache_in_output>(Knob::kv_cache_in_output, "kv_cache_in_output"),
    flag<&B::cache_copies_states>(Knob::cache_copies_states, "cache_copies_states"),
    flag<&B::checkpointing_input_grads>(Knob::checkpointing_input_grads,
                                        "checkpointing_input_grads"),
    flag<&B::bnb_embeddings_32bit>(Knob::bnb_embeddings_32bit, "bnb_embeddings_32bit"),
    flag<&B::model_dropout>(Knob::model_dropout, "model_dropout"),
    flag<&B::fused_gelu>(Knob::fused_gelu, "fused_gelu"),
    flag<&B::rms_norm_fp32_weight>(Knob::rms_norm_fp32_weight, "rms_norm_fp32_weight"),
    flag<&B::loss_in_model>(Knob::loss_in_model, "loss_in_model"),
    flag<&B::skips_grad_sync_while_accumulating>(Knob::skips_grad_sync_while_accumulating,
                                                 "skips_grad_sync_while_accumulating"),
};

constexpr std::array<std::string_view, 4> kLoadQuantisers{"none", "lightning_bnb",
                                                          "torchao_unchunked", "torchao_chunked"};

}  // namespace

std::span<const KnobInfo> knobs() {
  return kKnobs;
}

const KnobInfo& knob_info(Knob k) {
  for (const KnobInfo& i : kKnobs) {
    if (i.knob == k) return i;
  }
  return kKnobs.front();  // unreachable: every Knob has a row (tests/unit/knobs_test.cpp)
}

std::string_view knob_name(Knob k) {
  return knob_info(k).name;
}

void set_knob(FrameworkBehaviour& b, Knob k, std::int64_t v) {
  knob_info(k).set(b, v);
}

std::string_view name_of(LoadQuantiser q) {
  return kLoadQuantisers[static_cast<std::size_t>(q)];
}

std::optional<LoadQuantiser> parse_load_quantiser(std::string_view s) {
  for (std::size_t i = 0; i < kLoadQuantisers.size(); ++i) {
    if (kLoadQuantisers[i] == s) return static_cast<LoadQuantiser>(i);
  }
  return std::nullopt;
}

}  // namespace trainmem

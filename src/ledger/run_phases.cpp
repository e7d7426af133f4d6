// The run phases beyond the training step (run_phases.h): the QLoRA load transient, the
// validation pass and the sample generation, as ledger lines in the slots where they happen.
#include "ledger/run_phases.h"

#include <fmt/format.h>

#include <algorithm>

#include "ledger/activation_model.h"
#include "ledger/format.h"
#include "ledger/phases.h"
#include "model/inventory.h"
#include "model/model_spec.h"
#include "plan/framework.h"
#include "trainmem/render.h"
#include "util/checked.h"

namespace trainmem::ledger {
namespace {

constexpr const char* kLoadId = "temporaries.load_";
constexpr const char* kEvalId = "logits.eval_";
constexpr const char* kGenerationId = "temporaries.generation_";
constexpr const char* kTrainerEvalLossId = "logits.trainer_eval_";
constexpr const char* kTrainerEvalLayerId = "temporaries.trainer_eval_";
constexpr const char* kTrainerEvalCacheId = "activations.trainer_eval_kv_cache";

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

const char* quantiser_source(LoadQuantiser q) {
  switch (q) {
    case LoadQuantiser::none:
      return "";
    case LoadQuantiser::lightning_bnb:
      return "lightning@2.4.0.dev20240728 fabric/plugins/precision/bitsandbytes.py:305-340 "
             "_Linear4bit.quantize: weight.contiguous().to(device, torch.half), quantize_4bit";
    case LoadQuantiser::torchao_unchunked:
      return "torchao v0.1 dtypes/nf4tensor.py:376-399 convert_to_norm_float_weight, :438-446 "
             "quantize_tensor_nearest (diff = (value.unsqueeze(-1) - nf4).abs())";
    case LoadQuantiser::torchao_chunked:
      return "torchao v0.2.0 dtypes/nf4tensor.py CHUNK_SIZE = 1024**2, "
             "convert_to_norm_float_weight (quantize in chunks)";
  }
  return "";
}

// QLoRA: the largest quantised base weight, quantised on the GPU while everything built before it
// is live (the weights line counts its quantised form).
void add_load(const Context& ctx, Items& items) {
  const LoadQuantiser q = ctx.plan.behaviour.load_quantiser;
  if (q == LoadQuantiser::none || ctx.plan.method != Method::qlora) return;
  std::int64_t largest = 0;
  for (const TensorGroup& g : ctx.inventory.groups) {
    if (g.quantised && !g.mtp) largest = std::max(largest, tensor_elements(g));
  }
  if (largest == 0) return;
  const LoadTransient t = load_transient(q, largest);
  const PhaseMask when = phase_bit(0, Phase::loaded);
  const std::string n = with_commas(largest);
  const bool bnb = q == LoadQuantiser::lightning_bnb;
  auto add = [&](const char* what, const std::string& label, std::int64_t bytes,
                 const std::string& formula) {
    if (bytes <= 0) return;
    items.push_back({.id = std::string(kLoadId) + what,
                     .tenant = Tenant::temporaries,
                     .label = "Load (quantising the base weights): " + label,
                     .bytes = bytes,
                     .formula = formula,
                     .source = quantiser_source(q),
                     .live = when,
                     .estimated = false});
  };
  add("weight", "largest base weight in bf16 before quantisation", t.weight_bytes,
      fmt::format("{} elements x 2 B", n));
  add("copy", bnb ? "its fp16 copy (quantize_4bit input)" : "its scaled blocks (blocks / absmax)",
      t.copy_bytes, fmt::format("{} elements x 2 B", n));
  add("indices", "uint8 NF4 index of every element", t.indices_bytes,
      fmt::format("{} elements x 1 B", n));
  if (t.distance_bytes > 0) {
    const bool chunked = q == LoadQuantiser::torchao_chunked;
    const std::int64_t rows = chunked ? std::min(largest, kTorchaoNf4ChunkElements) : largest;
    const bool nibbles = chunked && t.distance_bytes == largest;
    add("distances",
        nibbles ? "the two nibble tensors combining the indices"
                : "distances to the 16 NF4 values and their abs (2 tensors)",
        t.distance_bytes,
        nibbles ? fmt::format("{} elements x 2 x 0.5 B", n)
                : fmt::format("2 x {} elements x 16 x 2 B", with_commas(rows)));
  }
}

// The validation pass or the generation after it, whichever holds more (they run one after the
// other between two steps).
void add_eval(const Context& ctx, Items& items) {
  const FrameworkBehaviour& b = ctx.plan.behaviour;
  if (!b.eval_between_steps && !b.generates_sample) return;
  const ModelSpec& s = ctx.spec;
  const TrainingPlan& p = ctx.plan;
  const int e = activation_settings(p).compute_bytes;
  const int out_bytes = b.fp32_logits_in_model ? 4 : e;
  const PhaseMask when = phase_bit(1, Phase::loaded);
  EvalLossChain chain;
  if (b.eval_between_steps)
    chain = eval_loss_chain(p.batch, p.seq, s.vocab, out_bytes, b.loss_upcast);
  GenerationCache gen;
  if (b.generates_sample) {
    gen = generation_cache(s.layers, s.heads, s.kv_heads, v_head_dim(s), p.seq, e);
  }
  const char* eval_src =
      "litgpt@00af8b0d finetune/lora.py:347-349 fit() (after optimizer.step(), zero_grad()), "
      ":369-384 validate(); utils.py:325-328 chunked_cross_entropy(chunk_size=0)";
  const char* gen_src =
      "litgpt@00af8b0d finetune/lora.py:388-407 generate_example(); model.py:119-142 "
      "set_kv_cache, :323-344 build_kv_cache, :545-547 build_mask_cache";
  if (chain.total() >= gen.total()) {
    const std::string nv =
        fmt::format("{} x {} tokens x {} vocab", p.batch, p.seq, with_commas(s.vocab));
    const std::string shifted =
        fmt::format("{} x {} tokens x {} vocab", p.batch, p.seq - 1, with_commas(s.vocab));
    const std::string after = gen.total() > 0 ? fmt::format(" (the generation after it holds {})",
                                                            format_bytes(gen.total(), Unit::gib))
                                              : "";
    auto add = [&](const char* what, const std::string& label, std::int64_t bytes,
                   const std::string& formula) {
      if (bytes <= 0) return;
      items.push_back({.id = std::string(kEvalId) + what,
                       .tenant = Tenant::logits,
                       .label = "Validation between steps: " + label,
                       .bytes = bytes,
                       .formula = formula,
                       .source = eval_src,
                       .live = when,
                       .estimated = false});
    };
    add("output",
        fmt::format("full logits, {} (no lm_head chunks){}", out_bytes == 4 ? "fp32" : "bf16",
                    after),
        chain.output_bytes, fmt::format("{} x {} B", nv, out_bytes));
    add("shift_copy", "logits[..., :-1, :].reshape(-1, V) copies the strided slice",
        chain.shift_copy_bytes, fmt::format("{} x {} B", shifted, out_bytes));
    add("upcast", "fp32 upcast for the loss", chain.upcast_bytes, fmt::format("{} x 4 B", shifted));
    const int loss_bytes = b.loss_upcast ? 4 : out_bytes;
    add("log_softmax",
        fmt::format("cross_entropy's log_softmax output, {}", loss_bytes == 4 ? "fp32" : "bf16"),
        chain.log_softmax_bytes, fmt::format("{} x {} B", shifted, loss_bytes));
    return;
  }
  const std::int64_t heads = s.kv_heads == 1 ? 1 : s.heads;
  auto add = [&](const char* what, const std::string& label, std::int64_t bytes,
                 const std::string& formula) {
    items.push_back({.id = std::string(kGenerationId) + what,
                     .tenant = Tenant::temporaries,
                     .label = "Sample generation between steps: " + label,
                     .bytes = bytes,
                     .formula = formula,
                     .source = gen_src,
                     .live = when,
                     .estimated = false});
  };
  add("kv_cache",
      fmt::format("KV cache, batch 1{}", chain.total() > 0
                                             ? fmt::format(" (the validation before it holds {})",
                                                           format_bytes(chain.total(), Unit::gib))
                                             : ""),
      gen.kv_bytes,
      fmt::format("2 x {} layers x {} heads x {} positions x {} head dim x {} B", s.layers, heads,
                  p.seq, v_head_dim(s), e));
  add("mask_cache", "causal mask cache (bool)", gen.mask_bytes,
      fmt::format("{} x {} positions x 1 B", p.seq, p.seq));
}

// The widest MLP a token goes through: the dense MLP where the model has dense layers, one routed
// expert (every token routed to it: the upper bound of the HF experts loop) or the shared experts.
std::int64_t eval_mlp_width(const ModelSpec& s) {
  const MoeSpec& m = s.moe;
  const bool dense_layers = m.experts == 0 || m.first_dense_layers > 0 || m.layer_step > 1;
  return std::max({dense_layers ? s.intermediate : std::int64_t{0}, m.expert_intermediate,
                   m.shared_experts * m.shared_intermediate});
}

// The Hugging Face Trainer's evaluation between optimizer steps (eval_strategy steps or epoch):
// one prediction_step at per_device_eval_batch_size, whichever of its two moments holds more (the
// layers' no_grad working set, then the lm_head and the loss).
void add_trainer_eval(const Context& ctx, Items& items) {
  const TrainingPlan& p = ctx.plan;
  if (p.eval_strategy == EvalStrategy::no || p.behaviour.eval_between_steps) return;
  const FrameworkBehaviour& b = p.behaviour;
  const ModelSpec& s = ctx.spec;
  const ActivationSettings a = activation_settings(p);
  const int e = a.compute_bytes;
  const int out_bytes = b.fp32_logits_in_model ? 4 : e;
  const std::int64_t n = p.eval_batch;
  // Liger's fused loss and TRL's chunked NLL return no logits from an evaluation forward
  // (trainer.py:3273-3274 skip_logits when use_liger_kernel and prediction_loss_only; TRL
  // sft_trainer.py chunked_nll: logits=None).
  TrainerEvalLoss loss;
  if (p.loss == Loss::full) {
    loss = trainer_eval_loss(n, p.seq, s.vocab, s.hidden, a.stream_bytes, out_bytes, b.loss_upcast,
                             b.loss_shift_copy);
  }
  const std::int64_t width = eval_mlp_width(s);
  RoleSet adapted = 0;
  for (const LayerPlan& l : layer_plans(s, ctx.inventory, p)) adapted |= l.adapted;
  const EvalLayerShape shape{
      .batch = n,
      .seq = p.seq,
      .hidden = s.hidden,
      .mlp_width = width,
      .heads = s.heads,
      .layers = s.layers,
      .gated_mlp = s.mlp == MlpKind::gated,
      .stream_bytes = a.stream_bytes,
      .compute_bytes = e,
      // Under autocast the fp32 adapters' matmuls return bf16 and the input is already fp32.
      .adapter_bytes = a.autocast ? e : a.adapter_bytes,
      .adapter_input_cast = !a.autocast && a.adapter_bytes != a.stream_bytes,
      .up_adapted = (adapted & (role_bit(Role::up) | role_bit(Role::gate_up))) != 0,
      .gate_adapted = (adapted & role_bit(Role::gate)) != 0,
      .eager_scores = attention_kernel(s, a) == AttentionKernel::eager};
  const bool gated = shape.gated_mlp;
  const EvalLayerTransient layer = eval_layer_transient(shape);
  const PhaseMask when = phase_bit(1, Phase::loaded);
  const std::string what =
      fmt::format("Evaluation between steps (eval batch {} x {} tokens): ", n, p.seq);
  const std::string tokens = fmt::format("{} x {} tokens", n, p.seq);
  const char* loop_src =
      "transformers v5.24.0 trainer.py:1943 optimizer.step(), :1954 model.zero_grad(), :1958 "
      "_maybe_log_save_evaluate; :2876 evaluate(prediction_loss_only=True); :3193-3299 "
      "prediction_step (:3247 no_grad, :3275 compute_loss(return_outputs=True))";
  auto add = [&](const char* id, const char* part, Tenant tenant, const std::string& label,
                 std::int64_t bytes, const std::string& formula, const char* source) {
    if (bytes <= 0) return;
    items.push_back({.id = std::string(id) + part,
                     .tenant = tenant,
                     .label = what + label,
                     .bytes = bytes,
                     .formula = formula,
                     .source = source,
                     .live = when,
                     .estimated = false});
  };
  // With use_cache on (kv_cache_in_output: the Trainer before transformers 5 leaves the
  // config's), the evaluation forward builds a DynamicCache of the eval batch, kept in the output
  // until prediction_step returns; eval mode is not training, so gradient checkpointing does not
  // turn it off (utils/generic.py merge_with_config_defaults checks self.training). Live through
  // the lm_head and loss; a layer's working set sees all but the layers after it, priced whole.
  if (b.kv_cache_in_output && runs_transformers_models(p.framework)) {
    const std::int64_t per_token = kv_cache_bytes_per_token(s, a);
    add(kTrainerEvalCacheId, "", Tenant::activations,
        "the DynamicCache of every layer's key and value states (use_cache)",
        sat_mul(sat_mul(sat_mul(s.layers, n), p.seq), per_token),
        fmt::format("{} layers x {} x {} B/token", s.layers, tokens, with_commas(per_token)),
        "transformers cache_utils.py DynamicLayer.update; trainer.py prediction_step "
        "compute_loss(return_outputs=True)");
  }
  if (loss.total() >= layer.total()) {
    const char* loss_src =
        "transformers v5.24.0 models/llama/modeling_llama.py:469-475 (last_hidden_state, "
        "lm_head, loss_function); loss/loss_utils.py:51-73 ForCausalLMLoss (:61 logits.float(), "
        ":65 labels padded)";
    const std::string nv = fmt::format("{} x {} vocab", tokens, with_commas(s.vocab));
    const std::string layer_note = layer.total() > 0
                                       ? fmt::format(" (a layer's working set before it holds {})",
                                                     format_bytes(layer.total(), Unit::gib))
                                       : "";
    add(kTrainerEvalLossId, "hidden", Tenant::logits,
        "last hidden state, the lm_head input" + layer_note, loss.hidden_bytes,
        fmt::format("{} x {} hidden x {} B", tokens, with_commas(s.hidden), a.stream_bytes),
        loss_src);
    add(kTrainerEvalLossId, "output", Tenant::logits,
        fmt::format("logits, {} (kept in the model output until prediction_step returns)",
                    out_bytes == 4 ? "fp32" : "bf16"),
        loss.output_bytes, fmt::format("{} x {} B", nv, out_bytes), loop_src);
    add(kTrainerEvalLossId, "shift_copy", Tenant::logits,
        "loss: shifted contiguous copy of the logits (transformers < 4.49)", loss.shift_copy_bytes,
        fmt::format("{} x 4 B", nv), "transformers v4.48 loss/loss_utils.py ForCausalLMLoss");
    add(kTrainerEvalLossId, "upcast", Tenant::logits, "loss: fp32 upcast of the logits",
        loss.upcast_bytes, fmt::format("{} x 4 B", nv), loss_src);
    const int loss_bytes = b.loss_upcast || out_bytes == 4 ? 4 : out_bytes;
    add(kTrainerEvalLossId, "log_softmax", Tenant::logits,
        fmt::format("loss: cross_entropy's log_softmax output, {}",
                    loss_bytes == 4 ? "fp32" : "bf16"),
        loss.log_softmax_bytes, fmt::format("{} x {} B", nv, loss_bytes), loss_src);
    return;
  }
  const char* layer_src =
      "transformers v5.24.0 models/llama/modeling_llama.py:390-401 LlamaModel.forward, "
      ":311-313 LlamaDecoderLayer, :164 LlamaMLP.forward, :193-197 eager_attention_forward "
      "(no_grad: nothing saved)";
  const std::string loss_note = loss.total() > 0
                                    ? fmt::format(" (the lm_head and loss after it hold {})",
                                                  format_bytes(loss.total(), Unit::gib))
                                    : "";
  add(kTrainerEvalLayerId, "stream", Tenant::temporaries,
      "the embedding output, a layer's input, residual and normed input" + loss_note,
      layer.stream_bytes,
      fmt::format("{} x {} x {} hidden x {} B", eval_stream_tensors(shape), tokens,
                  with_commas(s.hidden), a.stream_bytes),
      layer_src);
  if (layer.adapter_input_bytes + layer.mlp_bytes >= layer.scores_bytes) {
    const char* peft_src =
        "peft 0.21.2 tuners/lora/layer.py:1088-1113 Linear.forward (result + "
        "lora_B(lora_A(dropout(x))) * scaling; :1100 _cast_input_dtype)";
    add(kTrainerEvalLayerId, "adapter_input", Tenant::temporaries,
        "LoRA: the MLP input cast to the adapters' dtype", layer.adapter_input_bytes,
        fmt::format("{} x {} hidden x {} B", tokens, with_commas(s.hidden), a.adapter_bytes),
        peft_src);
    const int per = eval_mlp_bytes_per_element(shape);
    const int plain = gated ? 3 * e : 2 * e;
    const bool lora_moment = per > plain;
    add(kTrainerEvalLayerId, "mlp", Tenant::temporaries,
        lora_moment ? fmt::format("MLP: {} with its LoRA branch (lora_B output and its scaled "
                                  "copy, {})",
                                  shape.up_adapted ? (gated ? "act_fn(gate) and up_proj's output"
                                                            : "fc_in's output")
                                                   : "gate_proj's output",
                                  a.adapter_bytes == 4 ? "fp32" : "bf16")
        : gated     ? "MLP: act_fn(gate), up and their product"
                    : "MLP: fc_in output and its activation",
        layer.mlp_bytes, fmt::format("{} x {} width x {} B", tokens, with_commas(width), per),
        lora_moment ? peft_src : layer_src);
  } else {
    add(kTrainerEvalLayerId, "scores", Tenant::temporaries,
        "eager attention: scores, fp32 softmax and its cast", layer.scores_bytes,
        fmt::format("{} x {} heads x {} x {} scores x 8 B", n, s.heads, p.seq, p.seq), layer_src);
  }
}

}  // namespace

TrainerEvalLoss trainer_eval_loss(std::int64_t batch, std::int64_t seq, std::int64_t vocab,
                                  std::int64_t hidden, int stream_bytes, int out_bytes,
                                  bool loss_upcast, bool loss_shift_copy) {
  TrainerEvalLoss l;
  const std::int64_t logits = batch * seq * vocab;
  const int loss_bytes = loss_upcast || out_bytes == 4 ? 4 : out_bytes;
  l.hidden_bytes = batch * seq * hidden * stream_bytes;
  l.output_bytes = logits * out_bytes;
  l.shift_copy_bytes = loss_shift_copy ? logits * loss_bytes : 0;
  l.upcast_bytes = loss_bytes == 4 && out_bytes != 4 ? logits * 4 : 0;
  l.log_softmax_bytes = logits * loss_bytes;
  return l;
}

int eval_stream_tensors(const EvalLayerShape& shape) {
  return shape.layers > 1 ? 4 : 3;
}

int eval_mlp_bytes_per_element(const EvalLayerShape& shape) {
  const int e = shape.compute_bytes;
  const int a = shape.adapter_bytes;
  int most = shape.gated_mlp ? 3 * e : 2 * e;
  if (shape.up_adapted) most = std::max(most, (shape.gated_mlp ? 2 * e : e) + 2 * a);
  if (shape.gated_mlp && shape.gate_adapted) most = std::max(most, e + 2 * a);
  return most;
}

EvalLayerTransient eval_layer_transient(const EvalLayerShape& shape) {
  EvalLayerTransient t;
  const std::int64_t tokens = shape.batch * shape.seq;
  const bool adapted = shape.up_adapted || shape.gate_adapted;
  t.stream_bytes = eval_stream_tensors(shape) * tokens * shape.hidden * shape.stream_bytes;
  t.adapter_input_bytes =
      adapted && shape.adapter_input_cast ? tokens * shape.hidden * shape.adapter_bytes : 0;
  t.mlp_bytes = tokens * shape.mlp_width * eval_mlp_bytes_per_element(shape);
  t.scores_bytes = shape.eager_scores ? 8 * shape.batch * shape.heads * shape.seq * shape.seq : 0;
  return t;
}

EvalLossChain eval_loss_chain(std::int64_t batch, std::int64_t seq, std::int64_t vocab,
                              int out_bytes, bool loss_upcast) {
  EvalLossChain c;
  const std::int64_t shifted = batch * std::max<std::int64_t>(seq - 1, 0) * vocab;
  c.output_bytes = batch * seq * vocab * out_bytes;
  c.shift_copy_bytes = batch > 1 ? shifted * out_bytes : 0;
  c.upcast_bytes = loss_upcast && out_bytes != 4 ? shifted * 4 : 0;
  c.log_softmax_bytes = shifted * (loss_upcast ? 4 : out_bytes);
  return c;
}

GenerationCache generation_cache(std::int64_t layers, std::int64_t heads, std::int64_t kv_heads,
                                 std::int64_t head_dim, std::int64_t max_seq, int dtype_bytes) {
  const std::int64_t cache_heads = kv_heads == 1 ? 1 : heads;
  GenerationCache g;
  g.kv_bytes = 2 * layers * cache_heads * max_seq * head_dim * dtype_bytes;
  g.mask_bytes = max_seq * max_seq;
  return g;
}

LoadTransient load_transient(LoadQuantiser q, std::int64_t elements) {
  LoadTransient t;
  const std::int64_t n = elements;
  switch (q) {
    case LoadQuantiser::none:
      return t;
    case LoadQuantiser::lightning_bnb:
      t.weight_bytes = 2 * n;
      t.copy_bytes = 2 * n;
      return t;
    case LoadQuantiser::torchao_unchunked:
      t.weight_bytes = 2 * n;
      t.copy_bytes = 2 * n;
      t.distance_bytes = 2 * n * 16 * 2;
      return t;
    case LoadQuantiser::torchao_chunked: {
      t.weight_bytes = 2 * n;
      t.copy_bytes = 2 * n;
      t.indices_bytes = n;
      const std::int64_t chunk = std::min(n, kTorchaoNf4ChunkElements);
      // Later, the indices' high and low nibbles (n/2 bytes each) are combined.
      t.distance_bytes = std::max(2 * chunk * 16 * 2, n);
      return t;
    }
  }
  return t;
}

void add_run_phases(const Context& ctx, Items& items) {
  if (ctx.plan.convention == Convention::textbook) return;
  add_load(ctx, items);
  add_eval(ctx, items);
  add_trainer_eval(ctx, items);
}

}  // namespace trainmem::ledger

namespace trainmem {

std::string_view run_phase_at(const Ledger& ledger, int slot) {
  for (const LedgerItem& i : ledger.items) {
    if ((i.live & (PhaseMask{1} << slot)) == 0) continue;
    if (ledger::starts_with(i.id, ledger::kLoadId)) return "loading: quantising the base weights";
    if (ledger::starts_with(i.id, ledger::kEvalId)) return "the validation pass between steps";
    if (ledger::starts_with(i.id, ledger::kTrainerEvalLossId) ||
        ledger::starts_with(i.id, ledger::kTrainerEvalLayerId)) {
      return "the evaluation between steps (Trainer.evaluate)";
    }
    if (ledger::starts_with(i.id, ledger::kGenerationId)) {
      return "the sample generation between steps";
    }
  }
  return "";
}

bool is_load_transient(const LedgerItem& item) {
  return ledger::starts_with(item.id, ledger::kLoadId);
}

}  // namespace trainmem

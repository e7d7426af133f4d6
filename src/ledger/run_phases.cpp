// The run phases beyond the training step (run_phases.h): the QLoRA load transient, the
// validation pass and the sample generation, as ledger lines in the slots where they happen.
#include "ledger/run_phases.h"

#include <fmt/format.h>

#include <algorithm>

#include "ledger/format.h"
#include "ledger/phases.h"
#include "model/inventory.h"
#include "model/model_spec.h"
#include "trainmem/render.h"

namespace trainmem::ledger {
namespace {

constexpr const char* kLoadId = "temporaries.load_";
constexpr const char* kEvalId = "logits.eval_";
constexpr const char* kGenerationId = "temporaries.generation_";

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
  const ModelSpec& s = ctx.model.spec;
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

}  // namespace

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
}

}  // namespace trainmem::ledger

namespace trainmem {

std::string_view run_phase_at(const Ledger& ledger, int slot) {
  for (const LedgerItem& i : ledger.items) {
    if ((i.live & (PhaseMask{1} << slot)) == 0) continue;
    if (ledger::starts_with(i.id, ledger::kLoadId)) return "loading: quantising the base weights";
    if (ledger::starts_with(i.id, ledger::kEvalId)) return "the validation pass between steps";
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

// The seed-001 per-tier table, from estimate() and fit() over the device database's tiers.
#include "verdict/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "trainmem/estimate.h"
#include "trainmem/render.h"
#include "trainmem/solve.h"

namespace trainmem {
namespace {

std::string short_name(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

std::string tier_label(const Device& d) {
  std::string label = d.name;
  constexpr std::string_view suffix = " tier";
  if (label.size() > suffix.size() && label.ends_with(suffix)) {
    label.resize(label.size() - suffix.size());
  }
  return label;
}

}  // namespace

std::vector<std::string_view> seed_table_presets() {
  return {"qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-30b-a3b"};
}

TrainingPlan table_plan(Method method, Convention convention) {
  TrainingPlan p;
  p.method = method;
  p.convention = convention;
  p.batch = 1;
  p.seq = 1024;
  p.checkpointing = Checkpointing::full;
  // The recipe the table was published with (docs/method.md): bf16 weights with an fp32 master
  // copy, AdamW with foreach, whatever the command line's defaults are now.
  p.precision = Precision::bf16_mixed;
  p.optimizer_impl = OptimizerImpl::foreach;
  p.lora.rank = 16;
  p.lora.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  return p;
}

std::vector<Device> seed_tiers() {
  std::vector<Device> out;
  for (const Device& d : list_devices()) {
    if (d.kind == DeviceKind::tier) out.push_back(d);
  }
  std::stable_sort(out.begin(), out.end(), [](const Device& a, const Device& b) {
    return a.capacity_bytes < b.capacity_bytes;
  });
  return out;
}

std::string smallest_tier(std::int64_t peak_bytes, const std::vector<Device>& tiers) {
  for (const Device& d : tiers) {
    if (peak_bytes <= d.capacity_bytes - d.reserve_bytes) return tier_label(d);
  }
  return tiers.empty() ? "none" : "over " + tier_label(tiers.back());
}

TableRow table_row(const LoadedModel& model, Convention convention,
                   const std::vector<Device>& tiers) {
  TableRow row;
  row.model = short_name(model.spec.name);
  row.full_bytes = totals(estimate(model, table_plan(Method::full, convention))).static_bytes;
  const Totals lora = totals(estimate(model, table_plan(Method::lora, convention)));
  const Totals qlora = totals(estimate(model, table_plan(Method::qlora, convention)));
  row.lora_bytes = lora.static_bytes;
  row.qlora_bytes = qlora.static_bytes;
  row.lora_peak_bytes = lora.peak_bytes;
  row.qlora_peak_bytes = qlora.peak_bytes;
  row.lora_tier = smallest_tier(lora.peak_bytes, tiers);
  row.qlora_tier = smallest_tier(qlora.peak_bytes, tiers);
  return row;
}

std::string seed_gb(std::int64_t bytes) {
  std::string s = fmt::format("{:.2f}", static_cast<double>(bytes) / static_cast<double>(kGB));
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string render_table_text(const std::vector<TableRow>& primary,
                              const std::vector<TableRow>& other, Convention convention) {
  const std::string_view a = name_of(convention);
  const std::string_view b = convention == Convention::textbook ? "exact" : "textbook";
  std::string out = fmt::format(
      "Training memory by model and method: the fixed part (weights, gradients, optimizer states,\n"
      "master weights) in GB (1e9 bytes); {} convention, {} beside it in brackets.\n"
      "Tier: the smallest that holds the step's peak at batch 1 x 1,024 tokens with checkpointing\n"
      "plus a 2 GB reserve. LoRA and QLoRA: rank 16 on q, k, v, o, gate, up, down; AdamW.\n\n",
      a, b);
  out += fmt::format("{:<15} {:>18} {:>18} {:>18}   {:<24} {:<24}\n", "model", "full fine-tune",
                     "LoRA", "QLoRA", "smallest tier, LoRA", "smallest tier, QLoRA");
  for (std::size_t i = 0; i < primary.size(); ++i) {
    const TableRow& p = primary[i];
    const TableRow* o = i < other.size() ? &other[i] : nullptr;
    auto cell = [&](std::int64_t mine, std::int64_t theirs) {
      return o ? fmt::format("{} [{}]", seed_gb(mine), seed_gb(theirs)) : seed_gb(mine);
    };
    auto tier = [&](const std::string& mine, const std::string& theirs) {
      return o ? fmt::format("{} [{}]", mine, theirs) : mine;
    };
    out += fmt::format(
        "{:<15} {:>18} {:>18} {:>18}   {:<24} {:<24}\n", p.model,
        cell(p.full_bytes, o ? o->full_bytes : 0), cell(p.lora_bytes, o ? o->lora_bytes : 0),
        cell(p.qlora_bytes, o ? o->qlora_bytes : 0), tier(p.lora_tier, o ? o->lora_tier : ""),
        tier(p.qlora_tier, o ? o->qlora_tier : ""));
  }
  out += fmt::format(
      "\nTextbook (seed 001): published counts (0.6e9, 1.7e9, 4e9, 8.2e9, 30.5e9) x 16 B for a\n"
      "full fine-tune; LoRA 2 B/param base + adapter x 16 B; QLoRA 0.55 B/param base + adapter x\n"
      "16 B; the 30B-A3B adapter treats the MLP as dense (intermediate 6144); activations\n"
      "layers x 1024 x hidden x 2 plus bf16 logits 1024 x vocab x 2.\n"
      "Exact: architecture counts; fp32 adapters (PEFT); NF4 with double quantisation and the\n"
      "16-bit embeddings, head and norms upcast to fp32 by prepare_model_for_kbit_training; the\n"
      "routed experts are not adapted by gate/up/down (name them with 'experts'); fp32 loss\n"
      "buffers and the optimizer step's scratch at the peak. On transformers 5 an MoE's routed\n"
      "experts are fused 3-D parameters that bitsandbytes does not quantise, and\n"
      "prepare_model_for_kbit_training upcasts them to fp32: 30B-A3B's QLoRA holds more than its\n"
      "LoRA (on transformers 4, --versions transformers=4.57, they are NF4).\n");
  return out;
}

std::string render_table_json(const std::vector<TableRow>& rows, Convention convention) {
  nlohmann::ordered_json j;
  j["schema"] = "trainmem.table/1";
  j["convention"] = std::string(name_of(convention));
  j["rows"] = nlohmann::ordered_json::array();
  for (const TableRow& r : rows) {
    j["rows"].push_back({{"model", r.model},
                         {"full_bytes", r.full_bytes},
                         {"lora_bytes", r.lora_bytes},
                         {"qlora_bytes", r.qlora_bytes},
                         {"lora_peak_bytes", r.lora_peak_bytes},
                         {"qlora_peak_bytes", r.qlora_peak_bytes},
                         {"lora_tier", r.lora_tier},
                         {"qlora_tier", r.qlora_tier}});
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace trainmem

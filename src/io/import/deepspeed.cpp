// DeepSpeed JSON (deepspeed/runtime/config.py: train_micro_batch_size_per_gpu,
// gradient_accumulation_steps, bf16.enabled, fp16.enabled, optimizer.type, zero_optimization).
// DeepSpeed's bf16/fp16 keep an fp32 master copy (runtime/bf16_optimizer.py). "auto" values are
// filled in by the HF Trainer and say nothing here. ZeRO, offload and the global batch are the
// layout's: the layout reader (io/import/dist/deepspeed.cpp) reads this file for them.
#include "io/import/formats.h"
#include "io/import/rules.h"

namespace trainmem::io {

const ImportFormat& deepspeed_format() {
  using namespace rules;
  static const ImportFormat f{
      "DeepSpeed JSON",
      [](const FlatConfig& c) {
        return has_prefix(c, "zero_optimization") || has(c, "train_micro_batch_size_per_gpu") ? 8
                                                                                              : 0;
      },
      {same("train_micro_batch_size_per_gpu", "batch"),
       same("gradient_accumulation_steps", "grad_accum"),
       when_true("bf16.enabled", "precision", "bf16-fp32-master"),
       when_true("fp16.enabled", "precision", "fp16-fp32-master"),
       {"optimizer.type", "optimizer",
        [](const std::string& v) -> std::optional<std::string> {
          return v == "Adam" || v == "AdamW" ? "adamw" : v;
        },
        ""},
       not_priced("zero_optimization.stage", kReadForTheLayout),
       not_priced("zero_optimization.offload_optimizer.device", kReadForTheLayout),
       not_priced("zero_optimization.offload_param.device", kReadForTheLayout),
       // The buckets, prefetch and persistence the ZeRO layout prices
       // (io/import/dist/deepspeed.cpp).
       not_priced("zero_optimization.reduce_bucket_size", kReadForTheLayout),
       not_priced("zero_optimization.allgather_bucket_size", kReadForTheLayout),
       not_priced("zero_optimization.sub_group_size", kReadForTheLayout),
       not_priced("zero_optimization.stage3_prefetch_bucket_size", kReadForTheLayout),
       not_priced("zero_optimization.stage3_param_persistence_threshold", kReadForTheLayout),
       not_priced("zero_optimization.stage3_max_live_parameters", kReadForTheLayout),
       not_priced("zero_optimization.overlap_comm", kReadForTheLayout),
       not_priced("zero_optimization.contiguous_gradients", kReadForTheLayout),
       not_priced("train_batch_size",
                  "the global batch: divided by micro-batch x accumulation, the layout's GPUs")},
      // Both engines stated off: neither the bf16 nor the fp16 optimizer wraps the model
      // (runtime/engine.py), so it trains in the dtype the script loaded it in, which this file
      // does not say (fp32 by from_pretrained's default before transformers 5, the checkpoint's
      // bf16 since). The precision stays the flags' or the method's default, and a note says so.
      [](const FlatConfig& c, ImportedConfig& out) {
        const auto off = [&](const char* key) {
          const auto it = c.find(key);
          return it != c.end() && is_false(it->second);
        };
        if (!off("bf16.enabled") || !off("fp16.enabled")) return;
        out.used.push_back(
            "bf16.enabled = false, fp16.enabled = false -> no precision: DeepSpeed trains in the "
            "dtype the model is loaded in (--precision fp32 for an fp32 load, bf16 for a bf16 "
            "one)");
      }};
  return f;
}

}  // namespace trainmem::io

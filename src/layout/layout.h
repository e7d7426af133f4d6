// The precision an engine runs (src/layout/layout.cpp).
#pragma once

#include "trainmem/distributed.h"

namespace trainmem {

// The precision an engine runs. DeepSpeed (bf16/fp16.enabled: 16-bit weights, fp32 master in
// its optimizer; runtime/bf16_optimizer.py, zero/stage_1_and_2.py), Megatron (fp32 main params)
// and sharding FSDP (fp32 sharded parameters, 16-bit unsharded copies by MixedPrecision) turn a
// 16-bit mixed-precision request (HF bf16=True, priced alone as torch.autocast over fp32 weights)
// into 16-bit weights with an fp32 master copy. DDP and one GPU keep autocast. Returns the plan
// unchanged when nothing applies.
TrainingPlan with_engine_precision(TrainingPlan plan);

// The two halves of it: whether a layout's engine keeps an fp32 master (DeepSpeed, Megatron,
// sharding FSDP), and the master-copy recipe of an autocast precision (others unchanged).
bool engine_keeps_master(const Layout& layout);

Precision with_master_copy(Precision precision);

}  // namespace trainmem

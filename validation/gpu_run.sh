#!/bin/sh
# The CUDA measurement run of issue 9, as one command on a lent GPU machine (docs/accuracy.md,
# "The CUDA measurement run"). Prepare here with scripts/gpu-wheels.sh, then call the device
# tool's run with carry [".whl"], timeout_s 590 and, to fit one call with the KV probe's rows
# already committed, command
#   GPU_RUN_SECONDS=380 KV_PROBE_SECONDS=0 SEGMENT_PROBE_SECONDS=50 sh validation/gpu_run.sh
# It installs the carried wheels (bitsandbytes, and the transformers and peft the CPU rows were
# measured with), records the device and library versions, measures the configurations of
# validation/matrix.py cuda() in fresh processes, writing each row to $OUT/gpu-measured.jsonl as
# soon as it finishes (rows measured before a time-out come back too; it stops at once if the
# first two fail; configurations already in validation/data/gpu-measured.jsonl are skipped), then
# measures a growing KV cache (validation/kv_growth_probe.py,
# $OUT/kv-growth.jsonl), and which request cuts each segment of the two configurations whose CUDA
# run caches more than their traced stream explains (validation/segment_probe.py,
# $OUT/segments.jsonl). Copy the rows to validation/data/gpu-measured.jsonl and run
# `trainmem validate validation/data/gpu-measured.jsonl`.
set -u
OUT=${OUT:-/tmp/gpu-run}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  export PYTHONPATH
fi
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch, transformers, peft, bitsandbytes as b; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__, "peft", peft.__version__, "bitsandbytes", b.__version__)'
  nproc
} 2>&1 | tee "$OUT/device.txt"
# The rows already committed are kept and not measured again (--resume): the file that comes back
# is the whole of validation/data/gpu-measured.jsonl.
cp validation/data/gpu-measured.jsonl "$OUT/gpu-measured.jsonl" 2>/dev/null
PYTHONUNBUFFERED=1 timeout "${GPU_RUN_SECONDS:-450}" \
  python3 validation/measure.py --matrix cuda --resume --give-up-after 2 \
  --out "$OUT/gpu-measured.jsonl" 2>&1 | tee "$OUT/log.txt"
# A growing KV cache (generate's DynamicCache) under fixed and expandable segments: whether CUDA
# strands outgrown segments as the allocator model says (validation/kv_growth_probe.py).
# KV_PROBE_SECONDS=0 skips it (its rows are committed: data/kv-growth-probe.ndjson).
for conf in "" "expandable_segments:True"; do
  [ "${KV_PROBE_SECONDS:-40}" -gt 0 ] || break
  timeout "${KV_PROBE_SECONDS:-40}" python3 validation/kv_growth_probe.py --alloc-conf "$conf" \
    --out "$OUT/kv-growth.jsonl" 2>&1 | tee -a "$OUT/kv-growth.log"
done
# The LoRA run's extra 594 MiB segment in its second backward, the checkpointed run's extra
# 20 MiB one in its first forward (tests/property/traced_replay_test.cpp, kKnownGaps), and the
# paged AdamW run's reserved memory, 9.7 % over the model's (no CPU trace: bitsandbytes): the
# request and Python stack behind every segment CUDA cuts.
for row in qwen3-0.6b_lora-r16_adamw-foreach_bf16_ckpt-none_sdpa_b2_s512 \
  qwen3-0.6b_full_adamw-foreach_bf16_ckpt-full_sdpa_b2_s512 \
  qwen3-0.6b_full_paged-adamw_bf16_ckpt-none_sdpa_b2_s512; do
  [ "${SEGMENT_PROBE_SECONDS:-60}" -gt 0 ] || break
  timeout "${SEGMENT_PROBE_SECONDS:-60}" python3 validation/segment_probe.py --row "$row" \
    --out "$OUT/segments.jsonl" 2>&1 | tee -a "$OUT/segments.log"
done

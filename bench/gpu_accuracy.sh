#!/bin/sh
# GPU accuracy benchmark: the estimator against the published GPU measurements
# (validation/data/gpu-published.jsonl), each row's metric against the matching figure of the
# allocator replay. Prints, per metric, the median absolute error, the worst, and the mean signed
# error (the bias: negative means the estimate is low), then the issue-9 targets and whether each
# is met. Not a test: it exits 0 unless the tool fails. Usage: bench/gpu_accuracy.sh [BIN]
set -eu
BIN=${1:-build/bin/trainmem}
# Published rows (other people's runs), the harness's own CUDA rows, and the CUDA matrix's loops
# traced on CPU and replayed (not GPU measurements: the derived event stream's error alone,
# validation/traced_rows.py), each file on its own.
for DATA in ${DATA:-validation/data/gpu-published.jsonl validation/data/gpu-measured.jsonl \
  validation/data/gpu-traced.jsonl}; do
  "$BIN" validate "$DATA" --json | python3 "$(dirname "$0")/gpu_accuracy.py"
  echo
done

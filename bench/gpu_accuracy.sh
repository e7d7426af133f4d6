#!/bin/sh
# GPU accuracy benchmark: the estimator against the published GPU measurements
# (validation/data/gpu-published.jsonl), each row's metric against the matching figure of the
# allocator replay. Prints, per metric, the median absolute error, the worst, and the mean signed
# error (the bias: negative means the estimate is low), then the issue-9 targets and whether each
# is met. Not a test: it always exits 0 unless the tool fails. Usage: bench/gpu_accuracy.sh [BIN]
set -eu
BIN=${1:-build/bin/trainmem}
DATA=${DATA:-validation/data/gpu-published.jsonl}
"$BIN" validate "$DATA" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d["per_row"]
print(f"GPU accuracy on {len(rows)} published rows ({d[\"file\"]})")
print(f"{\"metric\":<24}{\"rows\":>5}{\"median |err|\":>15}{\"worst |err|\":>13}{\"mean signed\":>13}")
for metric, s in d["by_metric"].items():
    print(f"{metric:<24}{s[\"rows\"]:>5}{s[\"median_abs_pct_error\"]:>14.2f}%"
          f"{s[\"max_abs_pct_error\"]:>12.2f}%{s[\"mean_signed_pct_error\"]:>+12.2f}%")
print(f"{\"all\":<24}{len(rows):>5}{d[\"median_abs_pct_error\"]:>14.2f}%"
      f"{d[\"max_abs_pct_error\"]:>12.2f}%{d[\"mean_signed_pct_error\"]:>+12.2f}%")
m = d["by_metric"]
def ok(b): return "met" if b else "NOT met"
alloc = m.get("max_memory_allocated", {}).get("median_abs_pct_error", 0)
res = m.get("max_memory_reserved", {}).get("median_abs_pct_error", 0)
print("targets (issue 9):")
print(f"  allocated median <= 3%: {alloc:.2f}% {ok(alloc <= 3)}")
print(f"  reserved median <= 5%: {res:.2f}% {ok(res <= 5)}")
print(f"  worst <= 10%: {d[\"max_abs_pct_error\"]:.2f}% {ok(d[\"max_abs_pct_error\"] <= 10)}")
print(f"  mean signed within 2%: {d[\"mean_signed_pct_error\"]:+.2f}% {ok(abs(d[\"mean_signed_pct_error\"]) <= 2)}")
print("by source:")
for src, s in d["by_source"].items():
    print(f"  {src[:70]:<70} median {s[\"median_abs_pct_error\"]:6.2f}%  bias {s[\"mean_signed_pct_error\"]:+6.2f}%  ({s[\"rows\"]})")
'

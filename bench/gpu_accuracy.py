"""Summarise `trainmem validate --json` of the GPU rows: per metric, targets, per source."""
import json
import sys

d = json.load(sys.stdin)
rows = d["per_row"]
print(f"GPU accuracy on {len(rows)} rows ({d['file']})")
print(f"{'metric':<24}{'rows':>5}{'median |err|':>15}{'worst |err|':>13}{'mean signed':>13}")
for metric, s in d["by_metric"].items():
    print(f"{metric:<24}{s['rows']:>5}{s['median_abs_pct_error']:>14.2f}%"
          f"{s['max_abs_pct_error']:>12.2f}%{s['mean_signed_pct_error']:>+12.2f}%")
print(f"{'all':<24}{len(rows):>5}{d['median_abs_pct_error']:>14.2f}%"
      f"{d['max_abs_pct_error']:>12.2f}%{d['mean_signed_pct_error']:>+12.2f}%")
m = d["by_metric"]


def ok(b):
    return "met" if b else "NOT met"


alloc = m.get("max_memory_allocated", {}).get("median_abs_pct_error", 0)
res = m.get("max_memory_reserved", {}).get("median_abs_pct_error", 0)
worst, bias = d["max_abs_pct_error"], d["mean_signed_pct_error"]
print("targets (issue 9):")
print(f"  allocated median <= 3%: {alloc:.2f}% {ok(alloc <= 3)}")
print(f"  reserved median <= 5%: {res:.2f}% {ok(res <= 5)}")
print(f"  worst <= 10%: {worst:.2f}% {ok(worst <= 10)}")
print(f"  mean signed within 2%: {bias:+.2f}% {ok(abs(bias) <= 2)}")
print("by source:")
for src, s in d["by_source"].items():
    print(f"  {src[:70]:<70} median {s['median_abs_pct_error']:6.2f}%  "
          f"bias {s['mean_signed_pct_error']:+6.2f}%  ({s['rows']})")

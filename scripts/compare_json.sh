#!/usr/bin/env bash
# Compares two trainmem binaries' --json output over every preset and a set of plans, and their
# validation reports: `scripts/compare_json.sh OLD_BIN NEW_BIN`. Prints each difference; exit 1
# if any. Used to check that a restructure changes no figure (issue 12).
set -uo pipefail
old=$1 new=$2
plans=("" "--method lora" "--method qlora --checkpointing full" "--batch 4 --seq 2048"
       "--method freeze --train-layers 0,1 --optimizer sgd" "--precision fp32 --optimizer adafactor"
       "--memory 24GB")
diffs=0 runs=0
for m in $("$new" models --json | python3 -c 'import json,sys; print(" ".join(m["id"] for m in json.load(sys.stdin)["models"]))'); do
  for p in "${plans[@]}"; do
    for cmd in estimate explain; do
      a=$("$old" $cmd "$m" $p --json 2>&1 || true)
      b=$("$new" $cmd "$m" $p --json 2>&1 || true)
      runs=$((runs + 1))
      # Keys the new plan document adds are allowed; every old key must keep its value.
      if ! python3 -c '
import json, sys
def sub(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and sub(v, b[k]) for k, v in a.items())
    return a == b
try:
    a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
except ValueError:
    sys.exit(sys.argv[1] != sys.argv[2])
sys.exit(0 if sub(a, b) else 1)' "$a" "$b"; then
        diffs=$((diffs + 1)); echo "DIFF: $cmd $m $p"; diff <(echo "$a") <(echo "$b") | head -5
      fi
    done
  done
done
for f in validation/data/measurements.jsonl; do
  a=$("$old" validate "$f" --json 2>&1); b=$("$new" validate "$f" --json 2>&1); runs=$((runs + 1))
  [[ "$a" == "$b" ]] || { diffs=$((diffs + 1)); echo "DIFF: validate $f"; }
done
echo "$runs comparisons, $diffs differences"
((diffs == 0))

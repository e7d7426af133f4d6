#!/usr/bin/env bash
# Times whole `trainmem estimate` processes (start-up, reading a config, estimating, printing)
# over repeated runs. Usage: bench/cli_time.sh [RUNS]. Needs build/bin/trainmem (make build).
# Uses hyperfine when present (apt-get install hyperfine), else a plain loop.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}
bin=build/bin/trainmem
config=validation/configs/qwen3-8b.json
[[ -f $config ]] || config=$(mktemp --suffix=.json) && \
  [[ -s $config ]] || echo '{"model_type":"qwen3","hidden_size":4096,"intermediate_size":12288,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":151936}' > "$config"
cases=("$bin estimate Qwen/Qwen3-8B --json"
       "$bin estimate $config --batch 4 --seq 2048"
       "$bin estimate qwen3-30b-a3b --method qlora --gpu rtx-4090")
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 20 --runs "$runs" "${cases[@]}"
else
  for c in "${cases[@]}"; do
    start=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do $c >/dev/null; done
    end=$(date +%s%N)
    echo "$c: $(( (end - start) / runs / 1000 )) us per process ($runs runs)"
  done
fi

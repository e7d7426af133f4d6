#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) in build-fuzz with clang, then runs each for SECONDS
# (default 60) from its committed seed corpus and dictionary. The working corpus grows under
# build-fuzz/corpus/ (the committed seeds are never written). Prints one line per target with its
# executions; exits non-zero on the first finding (crash, leak, timeout, out-of-memory), whose
# input libFuzzer saves as build-fuzz/findings/<target>-crash-*.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(safetensors config index measurements flags estimate import dataset devices
                                    tokenizer plan replay trace)

cxx=$(command -v clang++ || command -v clang++-14 || true)
[[ -n $cxx ]] || { echo "fuzz: clang++ not found (scripts/install-deps.sh --fuzz)" >&2; exit 1; }
CXX=$cxx cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINMEM_FUZZ=ON \
  -DTRAINMEM_BUILD_TESTS=OFF -DTRAINMEM_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --target "${targets[@]/%/_fuzz}"

mkdir -p build-fuzz/findings build-fuzz/logs
status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  dict=()
  [[ -f tests/fuzz/$t.dict ]] && dict=(-dict="tests/fuzz/$t.dict")
  log=build-fuzz/logs/$t.log
  if ! "build-fuzz/bin/${t}_fuzz" "${dict[@]}" -max_total_time="$seconds" -timeout=5 \
      -rss_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/findings/$t-" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
      >"$log" 2>&1; then
    status=1
    echo "fuzz $t: FINDING (see $log and build-fuzz/findings/)"
    tail -n 30 "$log"
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz $t: ${runs} executions in ${seconds} s"
done
exit $status

#!/usr/bin/env bash
# The long fuzz runs recorded in docs/reliability.md: every target for SECONDS (default 3600),
# one after another, then one line per target (executions, corpus size, findings) appended to
# build-fuzz/fuzz_long.txt with the date, commit and machine.
#   bench/fuzz_long.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
shift || true
out=build-fuzz/fuzz_long.txt
mkdir -p build-fuzz
{
  echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) $(nproc) cores, ${seconds} s per target"
} >>"$out"
scripts/fuzz.sh "$seconds" "$@" | tee -a "$out"

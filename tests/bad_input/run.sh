#!/usr/bin/env bash
# Runs every case of tests/bad_input/cases.txt through the CLI under a memory limit (1 GiB of
# address space) and a 5 s timeout, and checks its exit code and message. Registered with ctest.
#   tests/bad_input/run.sh path/to/trainmem [--no-memory-limit]
# (--no-memory-limit for sanitizer builds, whose shadow memory needs far more address space.)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli=$1
vlimit=1048576
seconds=5
# Sanitizer builds are unoptimised and instrumented (10-30x slower): no address-space limit, and
# a time limit scaled to match; the 5 s limit is held by the release build.
[[ ${2:-} == --no-memory-limit ]] && vlimit=unlimited && seconds=120
F=$here/files
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# What cannot be committed: pipes, links to devices, large and deeply nested files, binary
# safetensors, a non-UTF-8 folder name.
safetensors() {  # FILE HEADER_JSON DATA_BYTES
  local n=${#2} le="" i
  for i in 0 1 2 3 4 5 6 7; do le+=$(printf '\\x%02x' $(((n >> (8 * i)) & 255))); done
  { printf "$le"; printf '%s' "$2"; head -c "$3" /dev/zero; } >"$1"
}
mkfifo "$T/pipe.json"
mkdir -p "$T/empty_dir" "$T/st_devzero" "$T/st_pipe" "$T/st_empty" "$T/st_past_layers" "$T/st_narrow" "$T/nonutf8"
ln -s /dev/zero "$T/st_devzero/config.json"
mkfifo "$T/st_pipe/config.json"
for d in st_devzero st_pipe st_empty st_past_layers; do
  safetensors "$T/$d/model.safetensors" \
    '{"model.norm.weight":{"dtype":"BF16","shape":[64],"data_offsets":[0,128]}}' 128
done
safetensors "$T/st_empty/model.safetensors" '{}' 0
safetensors "$T/st_past_layers/model.safetensors" \
  '{"model.layers.5.input_layernorm.weight":{"dtype":"BF16","shape":[64],"data_offsets":[0,128]}}' 128
# An embedding 32 wide under a config of hidden_size 64.
safetensors "$T/st_narrow/model.safetensors" \
  '{"model.embed_tokens.weight":{"dtype":"BF16","shape":[1000,32],"data_offsets":[0,64000]}}' 64000
cp "$F/tiny_llama.json" "$T/st_narrow/config.json"
# Layer 0 of a 2-layer model only (a shard missing): refused, not priced as a smaller model.
mkdir -p "$T/st_partial"
safetensors "$T/st_partial/model-00001-of-00002.safetensors" \
  '{"model.layers.0.input_layernorm.weight":{"dtype":"BF16","shape":[64],"data_offsets":[0,128]}}' 128
cp "$F/tiny_llama.json" "$T/st_partial/config.json"
# A config.json that links to itself.
mkdir -p "$T/link_loop"
ln -s config.json "$T/link_loop/config.json"
# An MLP 999 wide under a config of intermediate_size 128.
mkdir -p "$T/st_wide_mlp"
safetensors "$T/st_wide_mlp/model.safetensors" \
  '{"model.layers.0.mlp.up_proj.weight":{"dtype":"BF16","shape":[999,64],"data_offsets":[0,127872]}}' 127872
cp "$F/tiny_llama.json" "$T/st_wide_mlp/config.json"
cp "$F/tiny_llama.json" "$T/st_empty/config.json"
cp "$F/tiny_llama.json" "$T/st_past_layers/config.json"
nonutf8=$(printf "$T/nonutf8/m\xff")
mkdir -p "$nonutf8" && cp "$F/tiny_llama.json" "$nonutf8/config.json"
ln -s "$nonutf8" "$T/nonutf8_link"
head -c $((17 << 20)) /dev/zero | tr '\0' ' ' >"$T/big.json"
{ printf '%.0s[' $(seq 200000); printf '%.0s]' $(seq 200000); } >"$T/deep.json"
cp "$T/deep.json" "$T/deep.jsonl"
# Datasets: binary junk, Parquet's magic bytes, one record longer than any sequence priced.
printf 'PK\003\004\000\000\377\376junk\n\000\001\002' >"$T/junk.txt"
cp "$T/junk.txt" "$T/junk.jsonl"
printf 'PAR1\025\004\000\000' >"$T/data.parquet"
head -c $((80 << 20)) /dev/zero | tr '\0' 'x' >"$T/huge_record.txt"
# A tokenizer.json beside a config: a pipe, a device, deep JSON, a regex that backtracks forever.
for d in tok_pipe tok_dev tok_deep tok_backtrack tok_vocab; do
  mkdir -p "$T/$d" && cp "$F/tiny_llama.json" "$T/$d/config.json"
done
mkfifo "$T/tok_pipe/tokenizer.json"
ln -s /dev/zero "$T/tok_dev/tokenizer.json"
cp "$T/deep.json" "$T/tok_deep/tokenizer.json"
printf '%s' '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
  "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated"}}' \
  >"$T/tok_backtrack/tokenizer.json"
printf '%s\n' "$(printf 'a%.0s' $(seq 60))b" >"$T/aaab.txt"
printf '%s' '{"model": {"type": "BPE", "vocab": {"a": 4294967296}, "merges": []}}' \
  >"$T/tok_vocab/tokenizer.json"

pass=0 fail=0
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  want_rc=$(sed 's/ *|.*//' <<<"$line")
  want_msg=$(sed 's/^[^|]*| *//; s/ *|.*//' <<<"$line")
  args_text=$(sed 's/^[^|]*|[^|]*| *//' <<<"$line")
  [[ $args_text == *'$T/nonutf8'* ]] && args_text=${args_text//'$T/nonutf8'/'"$nonutf8"'}
  eval "set -- $args_text"
  out=$( (ulimit -v "$vlimit"; timeout "$seconds" "$cli" "$@") 2>&1 </dev/null)
  rc=$?
  if [[ $rc == "$want_rc" && $out == *"$want_msg"* ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: trainmem $args_text"
    echo "  want exit $want_rc and '$want_msg'; got exit $rc:"
    head -c 600 <<<"$out" | sed 's/^/    /'
  fi
done <"$here/cases.txt"
echo "bad_input: $pass passed, $fail failed"
((fail == 0))

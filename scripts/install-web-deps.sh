#!/usr/bin/env bash
# The web page's build and browser-test dependencies (make web, make test-web), installed only when
# missing: emscripten (compiles the engine to WebAssembly), chromium (the browser the tests drive),
# and Node.js with npm (playwright-core) when no node is on the PATH.
set -euo pipefail
packages=(emscripten chromium)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

#!/usr/bin/env bash
# Installs the Debian packages trainmem builds and tests with, only when one is missing,
# so `make run` and `make test` work on a fresh machine and cost nothing on a warm one.
set -euo pipefail
packages=(cmake ninja-build g++ make nlohmann-json3-dev libcli11-dev libfmt-dev googletest
          libgtest-dev libbenchmark-dev clang-format python3-dev libyaml-cpp-dev
          libicu-dev)
# `make fuzz` also needs clang with libFuzzer: scripts/install-deps.sh --fuzz
if [[ ${1:-} == --fuzz ]]; then packages=(clang-14 libclang-rt-14-dev cmake ninja-build make
                                     nlohmann-json3-dev libcli11-dev libfmt-dev libicu-dev); fi
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

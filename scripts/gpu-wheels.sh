#!/bin/sh
# Fetch, on this machine, the wheels the GPU measurement run needs and the lent GPU machine lacks
# (it has torch, transformers and peft but no bitsandbytes, and reaches no package index). They
# land in .whl/ (ignored by git), which the run carries: see validation/gpu_run.sh.
# Usage: scripts/gpu-wheels.sh   (bitsandbytes 0.50.2 ships libbitsandbytes_cuda130.so, the
# CUDA of the machine's torch 2.11.0+cu130)
set -eu
cd "$(dirname "$0")/.."
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_17_x86_64 -d .whl bitsandbytes==0.50.2 transformers==5.24.0 peft==0.21.2
ls -l .whl

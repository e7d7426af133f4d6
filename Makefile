# The two commands a new user runs: `make run` and `make test`. Both install what is missing.
.PHONY: deps build build-all run test test-cpp test-python python asan fuzz format bench gpu-accuracy \
        clean web-deps web test-web

# The PyTorch measurement harness: make measure | measure-subset | measure-test (validation/).
include validation/measure.mk

BUILD ?= build

deps:
	@scripts/install-deps.sh

# `make build` builds only the command-line tool (what `make run` needs); `make build-all` adds
# the tests and benchmarks.
build: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default --target trainmem

build-all: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default

# The built-in default example: Qwen2.5-1.5B, full fine-tune, bf16 mixed precision with AdamW,
# batch 4 x 1024 tokens, against a 32 GB card.
run: build
	@$(BUILD)/bin/trainmem estimate Qwen/Qwen2.5-1.5B --method full --precision bf16-mixed \
	  --optimizer adamw --batch 4 --seq 1024 --memory 32GB

test: test-cpp test-python test-web

test-cpp: build-all
	@ctest --preset default

# The web page (docs/web.md): the engine compiled to WebAssembly with emscripten, and the static
# page around it, in one folder: build-web/site/ (open build-web/site/index.html from disk).
web-deps:
	@scripts/install-web-deps.sh

web: deps web-deps
	@emcmake cmake -S web -B build-web -G Ninja >/dev/null
	@NODE_PATH=/usr/share/nodejs cmake --build build-web
	@echo "The page: build-web/site/index.html"

# Browser tests: playwright-core (web/package-lock.json) driving Debian's chromium headless.
test-web: build web
	@cd web && npm ci --no-audit --no-fund --loglevel=error
	@cd web && node --test tests/

# The Python package, installed from this checkout into python/.venv, and its pytest suite.
PY_VENV := python/.venv
python: deps
	@test -x $(PY_VENV)/bin/python || python3 -m venv $(PY_VENV)
	@$(PY_VENV)/bin/pip install -q --upgrade pip >/dev/null
	@$(PY_VENV)/bin/pip install -q ".[test]"

test-python: python build
	@$(PY_VENV)/bin/python -m pytest -q python/tests

asan: deps
	@cmake --workflow --preset asan

# Every libFuzzer target (tests/fuzz) for FUZZ_SECONDS each, from the committed seed corpora.
# Needs clang with libFuzzer (installed by scripts/install-deps.sh --fuzz). docs/reliability.md.
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/install-deps.sh --fuzz
	@scripts/fuzz.sh $(FUZZ_SECONDS)

# Google Benchmark of the estimate call, then whole-process timings of the command line.
# The estimator against published GPU runs (docs/accuracy.md, "GPU"): a benchmark, not a test.
gpu-accuracy: build
	@bench/gpu_accuracy.sh $(BUILD)/bin/trainmem

bench: build-all
	@$(BUILD)/bin/trainmem_bench
	@bench/cli_time.sh
	@bench/gpu_accuracy.sh $(BUILD)/bin/trainmem
	@python3 bench/dataset_run.py $(BUILD)/bin/trainmem
	@python3 bench/offload_lead.py $(BUILD)/bin/trainmem

format:
	@clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	@rm -rf build build-asan build-fuzz build-web

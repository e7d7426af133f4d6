# trainmem measurement harness (validation/). Included from the top-level Makefile; paths are
# relative to the repository root. The harness owns its virtualenv (validation/.venv), created
# from the pinned validation/requirements.txt the first time a target needs it.
#
#   make measure         full matrix -> validation/data/measurements.jsonl and crosscheck.jsonl
#   make measure-subset  five rows -> validation/out/subset.jsonl (not committed)
#   make measure-test    pytest checks + one tiny real measurement (validation/out/tiny.jsonl)
#   make measure-families         every family (issue 15) -> validation/data/families.jsonl, then
#                                 fake-vs-real per family -> validation/data/families-crosscheck.jsonl
#   make measure-families-subset  one row per family -> validation/out/families-subset.jsonl
#   make measure-holdout          seeded random draws of the whole grid -> validation/data/holdout*.jsonl
#   make measure-autocast-lora    LoRA under autocast, no checkpointing, five families
#                                 -> validation/data/autocast-lora.jsonl
#   make measure-distributed      DDP / FSDP1 / FSDP2 on 2 and 4 CPU ranks (gloo, torchrun)
#                                 -> validation/data/distributed.jsonl (issue 10 item 6)
#   make measure-distributed-zero DeepSpeed ZeRO 1-3 on 2 and 4 CPU ranks
#                                 -> validation/data/distributed-zero.jsonl
#   make alloc-traces             the CUDA matrix's loops traced on CPU (every configuration
#                                 without bitsandbytes) -> validation/data/alloc-traces/ROW.json
#   make traced-rows              those traces replayed by the allocator model, as GPU rows
#                                 -> validation/data/gpu-traced.jsonl
#   make measure-optimizer-states the states every --optimizer keeps after one step, as the HF
#                                 Trainer or the library builds it -> validation/data/optimizer-states.json

VALIDATION_PYTHON ?= python3
VALIDATION_VENV := validation/.venv
VALIDATION_PY := $(VALIDATION_VENV)/bin/python
VALIDATION_STAMP := $(VALIDATION_VENV)/.installed

$(VALIDATION_STAMP): validation/requirements.txt
	$(VALIDATION_PYTHON) -m venv $(VALIDATION_VENV)
	$(VALIDATION_PY) -m pip install -q -r validation/requirements.txt
	touch $@

.PHONY: measure measure-subset measure-test measure-families measure-families-subset measure-dora \
	measure-autocast-lora measure-holdout \
	measure-distributed measure-distributed-subset measure-distributed-zero alloc-traces traced-rows \
	measure-optimizer-states

measure: $(VALIDATION_STAMP)
	$(VALIDATION_PY) validation/measure.py --matrix full --out validation/data/measurements.jsonl
	$(VALIDATION_PY) validation/measure.py --matrix crosscheck --out validation/data/crosscheck.jsonl

measure-subset: $(VALIDATION_STAMP)
	$(VALIDATION_PY) validation/measure.py --matrix subset --out validation/out/subset.jsonl

measure-test: $(VALIDATION_STAMP)
	$(VALIDATION_PY) -m pytest -q validation/tests
	$(VALIDATION_PY) validation/measure.py --matrix tiny --out validation/out/tiny.jsonl

measure-families: $(VALIDATION_STAMP)
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix families --out validation/data/families.jsonl
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix families-crosscheck --out validation/data/families-crosscheck.jsonl
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix ckpt-dispatch --out validation/data/ckpt-dispatch.jsonl

measure-families-subset: $(VALIDATION_STAMP)
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix families-subset --out validation/out/families-subset.jsonl

# DoRA against LoRA (issue 9: DoRA's activations), two families, real tensors.
measure-dora: $(VALIDATION_STAMP)
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix dora --out validation/data/dora.jsonl
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix dora-crosscheck --out validation/data/dora-crosscheck.jsonl

# Configurations nobody chose: seeded random draws over the whole grid the harness runs
# (matrix.holdout, holdout_2, holdout_3, holdout_4, holdout_5), storages alive. docs/accuracy.md, "Held-out draws".
measure-holdout: $(VALIDATION_STAMP)
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix holdout --out validation/data/holdout.jsonl
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix holdout-2 --out validation/data/holdout-2.jsonl
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix holdout-3 --out validation/data/holdout-3.jsonl
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix holdout-4 --out validation/data/holdout-4.jsonl
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix holdout-5 --out validation/data/holdout-5.jsonl
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix head-backward --out validation/data/head-backward.jsonl

# LoRA under autocast without checkpointing: which bf16 weight copies the matmuls keep.
measure-autocast-lora: $(VALIDATION_STAMP)
	nice -n 5 $(VALIDATION_PY) validation/measure.py --matrix autocast-lora --out validation/data/autocast-lora.jsonl

measure-distributed: $(VALIDATION_STAMP)
	nice -n 5 $(VALIDATION_PY) validation/distributed.py --matrix dist --out validation/data/distributed.jsonl

measure-distributed-subset: $(VALIDATION_STAMP)
	nice -n 5 $(VALIDATION_PY) validation/distributed.py --matrix dist-subset --out validation/out/distributed-subset.jsonl

VALIDATION_DS_STAMP := $(VALIDATION_VENV)/.deepspeed

$(VALIDATION_DS_STAMP): validation/requirements-deepspeed.txt $(VALIDATION_STAMP)
	$(VALIDATION_PY) -m pip install -q --no-deps -r validation/requirements-deepspeed.txt
	touch $@

measure-distributed-zero: $(VALIDATION_DS_STAMP)
	nice -n 5 $(VALIDATION_PY) validation/distributed.py --matrix dist-zero --out validation/data/distributed-zero.jsonl

# The CUDA matrix's loops on CPU (issue 9: the derived event stream against the real one). Rows
# whose stream is another row's under a different PYTORCH_CUDA_ALLOC_CONF are not traced twice.
alloc-traces: $(VALIDATION_STAMP)
	for row in $$($(VALIDATION_PY) validation/alloc_stream.py --list); do \
	  nice -n 5 $(VALIDATION_PY) validation/alloc_stream.py --row $$row \
	    --out validation/data/alloc-traces/$$row.json || exit 1; done

traced-rows: build
	python3 validation/traced_rows.py --replay build/bin/trainmem_replay_trace

VALIDATION_OPT_STAMP := $(VALIDATION_VENV)/.optimizers

$(VALIDATION_OPT_STAMP): validation/requirements-optimizers.txt $(VALIDATION_STAMP)
	$(VALIDATION_PY) -m pip install -q --no-deps -r validation/requirements-optimizers.txt
	touch $@

# tests/golden/optimizer_states_test.cpp holds trainmem's optimizer-state line to these figures.
measure-optimizer-states: $(VALIDATION_OPT_STAMP)
	cd validation && ../$(VALIDATION_PY) optimizer_state_probe.py \
	  --config configs/llama-tiny.json --config configs/gpt2-tiny.json --out data/optimizer-states.json

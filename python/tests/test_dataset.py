"""estimate(..., dataset=PATH): the same dataset report as `trainmem estimate --dataset`, with
exact token counts when a tokenizer.json sits beside the model's config."""
import json
import os
import shutil
import subprocess

import pytest

import trainmem
from test_api import CLI, ROOT, cli_json

TOKENIZERS = os.path.join(ROOT, "tests", "data", "tokenizers")
DATASET = os.path.join(TOKENIZERS, "dataset.jsonl")


def nearest_rank(sorted_values, percent):
    rank = max(1, -(-percent * len(sorted_values) // 100))
    return sorted_values[rank - 1]


@pytest.fixture
def model_dir(tmp_path):
    shutil.copy(os.path.join(ROOT, "tests", "bad_input", "files", "tiny_llama.json"),
                tmp_path / "config.json")
    return tmp_path


def test_a_tokenizer_beside_the_config_counts_exactly(model_dir):
    shutil.copy(os.path.join(TOKENIZERS, "llama3_split.json"), model_dir / "tokenizer.json")
    expected = json.load(open(os.path.join(TOKENIZERS, "dataset_expected.json")))
    counts = sorted(expected["tokens_per_record"])  # the tokenizers library's own counts

    r = trainmem.estimate(str(model_dir / "config.json"), dataset=DATASET, seq=256)
    d = r.dataset
    assert d["tokens_counted_by"] == "exact (tokenizer.json)"
    assert d["tokens_estimated"] is False
    assert d["tokens"]["p50"] == nearest_rank(counts, 50)
    assert d["tokens"]["p95"] == nearest_rank(counts, 95)
    assert d["tokens"]["max"] == counts[-1]
    assert d["tokens"]["total"] == sum(counts)
    assert d["max_length"] == 256
    assert d["truncated_records"] == sum(1 for c in counts if c > 256)
    # The same report as the command line's.
    cli = cli_json("estimate", str(model_dir / "config.json"), "--dataset", DATASET, "--seq",
                   "256")
    assert d == cli["dataset"]
    # And the same run of the file's batches through the allocator (docs/gpu.md).
    run = r.to_dict()["gpu"]["run"]
    assert run == cli["gpu"]["run"]
    assert run["steps"] == len(counts)  # batch 1: one step per record


def test_the_text_report_is_the_command_lines_with_the_dataset(model_dir):
    # text() and explain() print what `trainmem estimate|explain --dataset` prints: the GPU
    # figures over the dataset's batches, then the dataset's section.
    config = str(model_dir / "config.json")
    r = trainmem.estimate(config, dataset=DATASET, seq=256, gpu="rtx-4090")
    for method, command in ((r.text, "estimate"), (r.explain, "explain")):
        cli = subprocess.run([CLI, command, config, "--dataset", DATASET, "--seq", "256", "--gpu",
                              "rtx-4090"], capture_output=True, text=True, check=True).stdout
        assert "\nDataset: " in cli
        assert method().rstrip("\n") == cli.rstrip("\n")


def test_without_a_tokenizer_the_counts_are_estimates(model_dir):
    r = trainmem.estimate(str(model_dir / "config.json"), dataset=DATASET)
    assert r.dataset["tokens_estimated"] is True
    assert r.dataset["tokens_counted_by"] == "estimate"
    assert r.dataset["max_length"] is None  # no seq given: records priced untruncated
    assert trainmem.estimate(str(model_dir / "config.json")).dataset is None


def test_an_unsupported_tokenizer_falls_back_with_a_note(model_dir):
    (model_dir / "tokenizer.json").write_text(
        json.dumps({"model": {"type": "WordPiece", "vocab": {"a": 0}}}))
    d = trainmem.estimate(str(model_dir / "config.json"), dataset=DATASET).dataset
    assert d["tokens_estimated"] is True
    assert any('model.type: "WordPiece" is not run by trainmem' in n for n in d["notes"])


def test_a_missing_dataset_is_an_error():
    with pytest.raises(trainmem.TrainmemError, match="missing.jsonl"):
        trainmem.estimate("qwen3-0.6b", dataset=os.path.join(TOKENIZERS, "missing.jsonl"))


def test_advise_with_a_dataset_matches_the_command_line(model_dir):
    shutil.copy(os.path.join(TOKENIZERS, "llama3_split.json"), model_dir / "tokenizer.json")
    config = str(model_dir / "config.json")
    a = trainmem.advise(config, memory="1GB", dataset=DATASET)
    assert a.dataset["tokens_counted_by"] == "exact (tokenizer.json)"
    cli = cli_json("advise", config, "--memory", "1GB", "--dataset", DATASET)
    assert a.dataset == cli["dataset"]
    assert a.now.peak_bytes == cli["now"]["peak_bytes"]  # both at the longest record
    assert [o.change for o in a.options] == [o["change"] for o in cli["options"]]

"""A real tiny measurement: totals are consistent, above the static state, and both trackers agree."""
import pytest
import torch

import matrix
from harness import build, configs, run, step


@pytest.fixture(scope="module")
def rows():
    spec = matrix.tiny()[0]
    return {kind: run.measure(dict(spec, tracker=kind)) for kind in ("memtracker", "dispatch")}


def _param_bytes():
    model = build.build_model(configs.load("qwen3-tiny"), "bf16", "sdpa")
    return sum(p.numel() * p.element_size() for p in model.parameters())


def test_categories_sum_to_peak(rows):
    m = rows["memtracker"]["measured"]
    assert sum(m["by_category"].values()) == m["peak_bytes"]


def test_peak_exceeds_parameters_and_adam_state(rows):
    m = rows["memtracker"]["measured"]
    params = _param_bytes()
    assert m["phase_peaks"]["step1"]["loaded"] >= params
    # bf16 AdamW: weights + grads + two states at least, once the state exists
    assert m["peak_bytes"] >= 4 * params
    assert m["by_category"]["parameters"] == params


def test_first_step_allocates_optimizer_state(rows):
    p = rows["memtracker"]["measured"]["phase_peaks"]
    assert p["step2"]["forward"] > p["step1"]["forward"]


def test_dispatch_tracker_agrees_with_memtracker(rows):
    a, b = rows["memtracker"]["measured"], rows["dispatch"]["measured"]
    assert a["peak_bytes"] == b["peak_bytes"]
    assert a["phase_peaks"] == b["phase_peaks"]


def test_fake_mode_matches_real_tensors(rows):
    """Fake tensors trace the same storages as real ones (dense model, no mask, unpacked batch)."""
    fake = run.measure(dict(matrix.tiny()[0], mode="fake"))["measured"]
    real = rows["memtracker"]["measured"]
    assert fake["tracker"] == "fake+memtracker"
    assert fake["phase_peaks"] == real["phase_peaks"]
    assert fake["by_category"] == real["by_category"]


def test_batch_is_token_ids():
    ids, labels = step.make_batch(2, 8, 100)
    assert ids.dtype == torch.int64 and torch.equal(ids, labels)


def test_fake_mode_matches_real_tensors_with_lora():
    spec = dict(matrix.subset()[1], batch=1, seq=64)
    real = run.measure(spec)["measured"]
    fake = run.measure(dict(spec, mode="fake"))["measured"]
    assert fake["phase_peaks"] == real["phase_peaks"]
    assert fake["by_category"] == real["by_category"]

"""Make validation/ importable (harness package, matrix) and pin the torch thread count."""
import os
import sys

import pytest

VALIDATION = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, VALIDATION)


@pytest.fixture(scope="session", autouse=True)
def _one_thread():
    import torch
    torch.set_num_threads(1)

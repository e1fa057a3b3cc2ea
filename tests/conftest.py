"""Fixtures shared by the test files."""

import pytest


@pytest.fixture
def one_torch_thread():
    """Small batches run faster on one torch thread (and the test machine is shared)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)

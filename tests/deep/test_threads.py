import os

import pytest

torch = pytest.importorskip("torch")

from skssl.deep._threads import resolve_n_threads, torch_threads  # noqa: E402


def test_resolve_n_threads():
    cores = os.cpu_count() or 1
    assert resolve_n_threads(None) is None
    assert resolve_n_threads(3) == 3
    assert resolve_n_threads(-1) == cores
    assert resolve_n_threads(-cores - 5) == 1
    with pytest.raises(ValueError, match="n_jobs == 0"):
        resolve_n_threads(0)


@pytest.mark.parametrize("n_jobs", [1, 2, None])
def test_torch_threads_sets_and_restores(n_jobs):
    before = torch.get_num_threads()
    with torch_threads(n_jobs):
        assert torch.get_num_threads() == (before if n_jobs is None else n_jobs)
    assert torch.get_num_threads() == before


def test_torch_threads_restores_after_an_error():
    before = torch.get_num_threads()
    target = 1 if before != 1 else 2
    with pytest.raises(RuntimeError, match="boom"):
        with torch_threads(target):
            assert torch.get_num_threads() == target
            raise RuntimeError("boom")
    assert torch.get_num_threads() == before

"""A fit changes no process-wide thread setting, also when fits overlap in threads."""

import threading

import numpy as np
import pytest
import threadpoolctl
from threadpoolctl import threadpool_info, threadpool_limits

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC
from skssl.svm.kernels._kernels import dot


def _blas_threads():
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def _data():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 5)
    y = np.where(X[:, 0] > 0, 1, 0)
    y[10:] = -1
    return X, y


@pytest.mark.parametrize("Est", [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC])
def test_a_fit_leaves_the_blas_pools_alone(Est):
    X, y = _data()
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        Est(n_jobs=2).fit(X, y)
        assert _blas_threads() == before


@pytest.mark.parametrize("a_leaves_first", [True, False])
def test_overlapping_fits_leave_the_blas_pools_as_they_were(a_leaves_first, monkeypatch):
    """Two fits in threads, forced into the order A enters, B enters, then A (or B) leaves first.

    A limit saved and restored by each fit on its own leaves the process at
    one BLAS thread after "A enters, B enters, A leaves, B leaves" (B
    restores what it found: A's limit).
    """
    X, y = _data()
    inside = {"A": threading.Event(), "B": threading.Event()}
    may_leave = {"A": threading.Event(), "B": threading.Event()}
    solve = TransductiveSVC._solve

    def held_solve(self, *args, **kwargs):
        name = threading.current_thread().name
        inside[name].set()
        assert may_leave[name].wait(30)
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(TransductiveSVC, "_solve", held_solve)
    models = {}

    def fit(name):
        models[name] = TransductiveSVC().fit(X, y)

    # threadpoolctl (3.8 and later) lets only one live Python thread change OpenBLAS's pool; start with none,
    # as in a fresh process, so that the fits' threads could change it.
    release = getattr(getattr(threadpoolctl, "OpenBLASController", None), "clear_controlling_thread", None)
    if release is not None:
        release(force=True)
    before = _blas_threads()
    if not any(n > 1 for n in before):
        pytest.skip("the BLAS pools have one thread here: a fit that left them at one could not be seen")
    threads = {name: threading.Thread(target=fit, args=(name,), name=name) for name in ("A", "B")}
    threads["A"].start()
    assert inside["A"].wait(30)
    threads["B"].start()
    assert inside["B"].wait(30)
    order = ("A", "B") if a_leaves_first else ("B", "A")
    for name in order:
        may_leave[name].set()
        threads[name].join(60)
        assert not threads[name].is_alive()
    assert _blas_threads() == before
    np.testing.assert_array_equal(models["A"].coef_, models["B"].coef_)


def test_dot_matches_blas_to_rounding():
    rng = np.random.RandomState(0)
    for n in (0, 1, 7, 10_001, 60_000):
        a, b = rng.randn(n), rng.randn(n)
        assert dot(a, b) == pytest.approx(float(a @ b), rel=1e-12, abs=1e-12 * np.sqrt(n))

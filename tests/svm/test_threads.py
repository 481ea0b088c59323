"""The solvers run with one BLAS thread whatever the user's environment."""

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC
from skssl.svm import _da, _mfn
from skssl.svm._threads import single_blas_thread


def _blas_threads():
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def _data():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 5)
    y = np.where(X[:, 0] > 0, 1, 0)
    y[10:] = -1
    return X, y


def test_single_blas_thread_limits_and_restores():
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        seen = single_blas_thread(_blas_threads)()
        assert all(n == 1 for n in seen)
        assert _blas_threads() == before


def test_estimators_fit_under_one_blas_thread(monkeypatch):
    seen = []
    original = _mfn.cgls

    def spy(*args, **kwargs):
        seen.extend(_blas_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(_mfn, "cgls", spy)
    X, y = _data()
    with threadpool_limits(limits=2, user_api="blas"):
        for Est in (LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC):
            Est(n_jobs=2).fit(X, y)
        # The direct solver entry points limit it too.
        _mfn.l2_svm_mfn(X, np.where(y == 1, 1.0, -1.0), np.full(40, 0.025), alpha=1e-2)
        _da.deterministic_annealing(
            X, np.where(y == 1, 1.0, -1.0), y != -1, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=0.5
        )
        assert seen and all(n == 1 for n in seen)
        assert all(n == 2 for n in _blas_threads())

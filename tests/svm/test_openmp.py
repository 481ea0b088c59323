"""A fit asking for threads the kernels cannot use (built without OpenMP) says so, once per process."""

import warnings

import numpy as np
import pytest
from joblib import cpu_count

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC
from skssl.svm.kernels import _kernels

NO_OPENMP = "built without OpenMP"


def _data(n_classes=2):
    rng = np.random.RandomState(0)
    X = rng.randn(60, 5)
    y = np.digitize(X[:, 0], np.quantile(X[:, 0], np.linspace(0, 1, n_classes + 1)[1:-1]))
    y[12:] = -1
    return X, y


@pytest.fixture
def openmp_build(monkeypatch):
    """Set the kernels' OpenMP flag and forget an earlier warning of this process."""

    def build(openmp):
        monkeypatch.setattr(_kernels, "OPENMP", openmp)
        monkeypatch.setattr(_kernels, "_no_openmp_warned", False)

    return build


def _openmp_warnings(record):
    return [w for w in record if issubclass(w.category, UserWarning) and NO_OPENMP in str(w.message)]


@pytest.mark.parametrize("Est", [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC])
def test_n_jobs_without_openmp_warns(Est, openmp_build):
    openmp_build(False)
    X, y = _data()
    with pytest.warns(UserWarning, match=NO_OPENMP) as record:
        Est(n_jobs=2).fit(X, y)
    assert len(_openmp_warnings(record)) == 1
    assert "skssl.show_versions()" in str(_openmp_warnings(record)[0].message)


def test_the_warning_is_shown_once_per_process(openmp_build):
    openmp_build(False)
    X, y = _data()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(3):
            TransductiveSVC(n_jobs=2).fit(X, y)
    assert len(_openmp_warnings(record)) == 1


@pytest.mark.skipif(cpu_count() < 2, reason="n_jobs=-1 is one thread on a single-core machine")
def test_n_jobs_minus_one_without_openmp_warns(openmp_build):
    openmp_build(False)
    X, y = _data()
    with pytest.warns(UserWarning, match=NO_OPENMP):
        LinearL2SVC(n_jobs=-1).fit(X, y)


@pytest.mark.parametrize(
    ("openmp", "n_jobs", "n_classes"),
    [
        (True, 2, 2),  # OpenMP: the threads are used
        (False, 1, 2),  # one thread asked for
        (False, None, 2),
        (False, 2, 3),  # the two threads run one-vs-rest problems at once, one thread each
    ],
)
def test_no_warning_when_the_threads_are_used(openmp, n_jobs, n_classes, openmp_build):
    openmp_build(openmp)
    X, y = _data(n_classes)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        LinearL2SVC(n_jobs=n_jobs).fit(X, y)
    assert _openmp_warnings(record) == []

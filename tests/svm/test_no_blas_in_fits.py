"""The solvers' sums over long vectors do not call BLAS.

OpenBLAS runs ``ddot`` on more than 10,000 entries on its whole thread pool, whose threads then spin waiting
for more work: one such call per solve doubled the CPU time of a ``n_jobs=1`` fit on this 2-core machine (half
of it spent spinning). The solvers sum with ``skssl.svm.kernels._kernels.dot`` and ``squared_norm`` (numpy's
own loops) instead. numpy's BLAS entry points for 1-D sums are wrapped during each fit and any call on a long
vector is recorded.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC

#: OpenBLAS's ddot uses one thread up to this many entries (interface/dot.c).
BLAS_THREADED_FROM = 10_000


def _problem(n_classes, sparse):
    rng = np.random.RandomState(n_classes)
    n, d = 600, 40
    X = rng.randn(n, d) * (rng.rand(n, d) < (0.3 if sparse else 1.0))
    y = np.argmax(X[:, :n_classes] + 0.1 * rng.randn(n, n_classes), axis=1)
    y_semi = np.where(rng.rand(n) < 0.1, y, -1)
    for k in range(n_classes):
        y_semi[np.flatnonzero(y == k)[:2]] = k
    return (sp.csr_matrix(X) if sparse else X), y, y_semi


@pytest.fixture
def long_blas_sums(monkeypatch):
    """The sizes of the calls of ``np.dot``, ``np.vdot`` and ``np.inner`` on float arrays past the threshold."""
    calls = []
    for name in ("dot", "vdot", "inner"):
        original = getattr(np, name)

        def recording(a, b, *args, original=original, name=name):
            sizes = [np.size(x) for x in (a, b) if isinstance(x, np.ndarray) and x.dtype.kind == "f"]
            if sizes and max(sizes) > BLAS_THREADED_FROM:
                calls.append((name, max(sizes)))
            return original(a, b, *args)

        monkeypatch.setattr(np, name, recording)
    return calls


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "Est, n_classes",
    [(LinearL2SVC, 2), (TransductiveSVC, 2), (DeterministicAnnealingSVC, 2), (PottsDeterministicAnnealingSVC, 3)],
)
def test_a_fit_makes_no_long_blas_sum(long_blas_sums, Est, n_classes, sparse):
    X, y, y_semi = _problem(n_classes, sparse)
    # More than BLAS_THREADED_FROM values: 48,000 dense, about 21,600 stored in CSR.
    X = sp.hstack([X] * 3, format="csr") if sparse else np.hstack([X] * 2)
    if Est is LinearL2SVC:  # it reads the labeled rows only: all of them labeled
        Est(alpha=1e-2).fit(X, y)
    else:
        Est(alpha=1e-2, safeguard=None).fit(X, y_semi)
    assert long_blas_sums == []

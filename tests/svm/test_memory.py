"""Memory of the linear S3VM fits: what a fit allocates on top of X."""

import gc
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.solvers._da import optimize_p
from skssl.svm.kernels._rowblocks import RowSlicer
from skssl.svm.kernels._validation import check_design_scale

from .._benchmarks import load_benchmark


def _csr_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def _text_like_problem(n_rows=3500, n_features=3000, nnz_per_row=150, seed=0):
    rng = np.random.RandomState(seed)
    X = sp.random(n_rows, n_features, density=nnz_per_row / n_features, format="csr", random_state=rng)
    X.data = rng.rand(X.nnz)
    score = X @ (rng.randn(n_features) * (rng.rand(n_features) < 0.1))
    y = (score > np.median(score)).astype(int)
    flip = rng.rand(n_rows) < 0.1
    y[flip] = 1 - y[flip]
    y_semi = np.full(n_rows, -1)
    lab = rng.choice(n_rows, 100, replace=False)
    y_semi[lab] = y[lab]
    return X, y_semi


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_tsvm_fit_allocates_at_most_the_csr_size_of_x(n_jobs):
    # 525k nnz, 150 per row. The active rows reach ~79% of the non-zeros, just
    # under SLICE_FRACTION, so the fit slices them. Before the slice buffer,
    # the previous step's slice was still alive while the next one was cut
    # (two slices at once) and the peak was 1.67x the CSR size of X; with two
    # jobs, scipy's .T also copied the row blocks (see _rowblocks).
    X, y_semi = _text_like_problem()
    est = TransductiveSVC(alpha=1e-3, positive_fraction=0.5, safeguard=None, n_jobs=n_jobs)
    tracemalloc.start()
    try:
        est.fit(X, y_semi)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 1.0 * _csr_bytes(X), peak / _csr_bytes(X)


def test_optimize_p_keeps_no_reference_to_its_input():
    # scipy's brentq wraps its function in a self-referencing closure; a
    # closure over g would keep g alive until the cyclic collector runs
    # (about 100 arrays of the size of the unlabeled set over a DA fit).
    g = np.random.RandomState(0).randn(10_000)
    before = sys.getrefcount(g)
    enabled = gc.isenabled()
    gc.disable()
    try:
        optimize_p(g, 0.5, 0.3)
        optimize_p(g, 0.5, 0.3, weight=np.ones(g.size))
        assert sys.getrefcount(g) == before
    finally:
        if enabled:
            gc.enable()


def test_row_slicer_matches_fancy_indexing_and_reuses_its_buffer():
    # CSR only: the active rows of dense X are never copied (CGLS reads them in place, see DenseRows).
    rng = np.random.RandomState(1)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=rng)
    row_nnz = np.diff(X.indptr)
    slicer = RowSlicer()
    big = np.flatnonzero(rng.rand(300) < 0.7)
    small = np.flatnonzero(rng.rand(300) < 0.3)
    first = slicer.take(X, big, row_nnz[big])
    np.testing.assert_array_equal(first.toarray(), X[big].toarray())
    second = slicer.take(X, small, row_nnz[small])
    np.testing.assert_array_equal(second.toarray(), X[small].toarray())
    # The smaller slice is written into the buffer of the larger one.
    assert np.shares_memory(second.data, first.data)
    assert not np.shares_memory(second.data, X.data)
    np.testing.assert_array_equal(second @ np.arange(40.0), X[small] @ np.arange(40.0))
    np.testing.assert_array_equal(second.T @ np.ones(small.size), X[small].T @ np.ones(small.size))


@pytest.mark.parametrize("sparse", [True, False])
def test_scale_check_copies_nothing(sparse):
    rng = np.random.RandomState(2)
    X = sp.random(2000, 500, density=0.1, format="csr", random_state=rng)
    X.data -= 0.5
    X = X if sparse else X.toarray()
    values = X.data if sparse else X
    tracemalloc.start()
    try:
        check_design_scale(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.01 * values.nbytes
    big = X.copy()
    (big.data if sparse else big)[7] = -2e15  # the largest magnitude is a negative value
    with pytest.raises(ValueError, match="scale X"):
        check_design_scale(big)


def _fit_peak(est, X, y):
    gc.collect()
    tracemalloc.start()
    try:
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize(
    "make, n_rows, n_features, n_classes",
    [
        pytest.param(lambda: PottsDeterministicAnnealingSVC(), 1500, 400_000, 3, marks=pytest.mark.slow),
        (lambda: TransductiveSVC(), 300, 400_000, 2),
        (lambda: DeterministicAnnealingSVC(), 300, 400_000, 2),
    ],
    ids=["potts", "tsvm", "da"],
)
def test_wide_sparse_fit_grows_memory_by_a_few_coef(make, n_rows, n_features, n_classes):
    # 20 entries per row in 400,000 columns: all but a few percent of the columns hold no entry. The solvers'
    # work arrays of the length of w, the candidates the safeguard kept and the stacked results made the peak
    # 10 to 12 times coef_; the solvers now see only the used columns (on_used_columns).
    # the benchmark's own problem (benchmarks/wide_sparse_memory.py), so that test and results measure one thing
    X, y, y_semi = load_benchmark("wide_sparse_memory").wide_problem(n_rows, n_features, n_classes)
    est = make()
    peak = _fit_peak(est, X, y_semi)
    assert est.coef_.shape == (1 if n_classes == 2 else n_classes, n_features)
    assert peak <= 4 * est.coef_.nbytes + _csr_bytes(X), peak / est.coef_.nbytes
    # The columns no row uses keep weight 0; the model still separates the classes.
    unused = np.setdiff1d(np.arange(n_features), X.indices)
    assert not np.any(est.coef_[:, unused])
    assert np.mean(est.transduction_ == y) > 0.9

"""The compiled dense path of l2-SVM-MFN (CGLS on the rows of a dense X read in place) against the CSR path."""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC
from skssl.svm.kernels import _rowblocks
from skssl.svm.solvers import _mfn
from skssl.svm.kernels._kernels import ThreadSchedule, dense_cgls, dense_matvec_subset
from skssl.svm.solvers._mfn import l2_svm_mfn
from skssl.svm.kernels._rowblocks import MIN_BLOCK_NNZ
from skssl.svm.kernels._validation import as_float64_design


def _problem(seed):
    """A random dense problem: one term per row (TSVM-like) or two per unlabeled row (DA-like)."""
    rng = np.random.RandomState(seed)
    n, d = rng.randint(20, 160), rng.randint(2, 40)
    X = rng.randn(n, d) * rng.choice([0.1, 1.0, 5.0])
    X[rng.rand(n, d) < rng.uniform(0.0, 0.8)] = 0.0  # zeros, which the CSR copy does not store
    alpha = 10.0 ** rng.uniform(-3, 0)
    if rng.rand() < 0.5:
        y = np.where(X[:, 0] + 0.5 * rng.randn(n) > 0, 1.0, -1.0)
        cost = rng.uniform(0.1, 2.0, n) / n
        rows = None
    else:
        n_lab = rng.randint(2, n // 2)
        unl = np.arange(n_lab, n)
        rows = np.concatenate([np.arange(n_lab), unl, unl])
        y = np.concatenate([np.where(rng.rand(n_lab) > 0.5, 1.0, -1.0), np.ones(unl.size), -np.ones(unl.size)])
        p = rng.uniform(0, 1, unl.size)
        cost = np.concatenate([np.full(n_lab, 1.0 / n_lab), p / unl.size, (1 - p) / unl.size])
    return X, y, cost, rows, alpha


def _fit(X, y, cost, rows, alpha, n_threads):
    if n_threads == 1:
        return l2_svm_mfn(X, y, cost, alpha=alpha, rows=rows)
    with ThreadSchedule(n_threads, mode="alternate") as schedule:
        return l2_svm_mfn(X, y, cost, alpha=alpha, rows=rows, schedule=schedule, n_threads=n_threads)


def _spy_on_the_dense_kernel(monkeypatch):
    # Dense X must reach the dense kernel: a CSR copy of it in the CSR kernel would be another path.
    calls = []
    dense = _mfn.dense_cgls

    def spy(*args):
        calls.append(1)
        return dense(*args)

    def csr(*args):
        raise AssertionError("dense X reached the CSR kernel")

    monkeypatch.setattr(_mfn, "dense_cgls", spy)
    monkeypatch.setattr(_mfn, "csr_cgls", csr)
    return calls


@pytest.mark.parametrize("seed", range(30))
def test_dense_path_gives_the_csr_paths_objective_and_weights(seed, monkeypatch):
    # Both paths minimize the same strictly convex F; at SVMlin's CGLS tolerance (1e-6 relative) the weights
    # are defined only to about that tolerance (the two paths' sums round differently, and CGLS may stop one
    # iteration apart), so the comparison tightens CGLS to 1e-13: then both land on the one minimizer.
    X, y, cost, rows, alpha = _problem(seed)
    monkeypatch.setattr(_mfn, "EPSILON", 1e-13)
    # Rows big enough for two blocks of the products on some seeds (the 2-thread fits then split them).
    monkeypatch.setattr("skssl.svm.kernels._rowblocks.MIN_BLOCK_NNZ", 20)
    for n_threads in (1, 2):
        dense = _fit(X, y, cost, rows, alpha, n_threads)
        csr = _fit(sp.csr_matrix(X), y, cost, rows, alpha, n_threads)
        assert dense.converged and csr.converged
        assert dense.objective == pytest.approx(csr.objective, rel=1e-9)
        assert np.linalg.norm(dense.w - csr.w) <= 1e-9 * np.linalg.norm(csr.w) + 1e-15
        assert dense.b == pytest.approx(csr.b, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(dense.outputs, X @ dense.w + dense.b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(30))
def test_dense_cgls_iterates_are_the_csr_cgls_iterates(seed):
    # A fixed number of CGLS iterations (no stopping rule to cross) from the same seed: the dense kernel's
    # iterates are the CSR kernel's up to rounding, on 1 and 2 blocks.
    X, y, cost, rows, alpha = _problem(seed)
    Xs = sp.csr_matrix(X)
    n = X.shape[0]
    rng = np.random.RandomState(seed)
    w0, b0 = rng.randn(X.shape[1]) * 0.1, 0.1
    c = rng.uniform(0, 1, n) * (rng.rand(n) > 0.2)
    target = np.sign(rng.randn(n))
    # Few iterations: past the first ones, CG on the normal equations amplifies rounding by up to ~100x per
    # iteration on these small systems (the directions lose their conjugacy), whatever computes the products.
    k = min(X.shape[1], 3)
    for n_blocks in (1, 2):
        bounds = (n * np.arange(n_blocks + 1, dtype=np.intp)) // n_blocks
        wd, od = w0.copy(), X @ w0 + b0
        bd, _, kd = dense_cgls(X, np.arange(n, dtype=np.intp), bounds, c, target, od, wd, b0, alpha, alpha, 0.0, k, 2)
        ws, os_ = w0.copy(), X @ w0 + b0
        bs, _, ks = _mfn.csr_cgls(
            Xs.data, Xs.indices, Xs.indptr, bounds, c, target, os_, ws, b0, alpha, alpha, 0.0, k, 2
        )
        assert kd == ks
        assert np.linalg.norm(wd - ws) <= 1e-9 * np.linalg.norm(ws) + 1e-15
        assert bd == pytest.approx(bs, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(od, os_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_dense_cgls_reads_the_listed_rows_in_place(seed):
    # CGLS on X[rows] (any order, repeats allowed) read in place equals CGLS on the copied rows, on 1-3 blocks.
    rng = np.random.RandomState(seed)
    n, d = rng.randint(10, 80), rng.randint(1, 30)
    X = rng.randn(n, d)
    rows = rng.randint(0, n, rng.randint(1, 2 * n)).astype(np.intp)
    cost = rng.uniform(0, 1, rows.size) * (rng.rand(rows.size) > 0.2)
    target = np.sign(rng.randn(rows.size))
    w0, b0, alpha = rng.randn(d) * 0.1, 0.2, 10.0 ** rng.uniform(-3, 0)
    XJ = np.ascontiguousarray(X[rows])
    results = []
    for source, idx in ((XJ, np.arange(rows.size, dtype=np.intp)), (X, rows)):
        for n_blocks in (1, 2, 3):
            w, out = w0.copy(), XJ @ w0 + b0
            bounds = (rows.size * np.arange(n_blocks + 1, dtype=np.intp)) // n_blocks
            b, ok, k = dense_cgls(source, idx, bounds, cost, target, out, w, b0, alpha, alpha, 0.0, 8, 2)
            results.append((w, b, out, k))
    w_ref, b_ref, out_ref, k_ref = results[0]
    for w, b, out, k in results[1:]:
        assert k == k_ref
        np.testing.assert_allclose(w, w_ref, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(out, out_ref, rtol=1e-9, atol=1e-12)
        assert b == pytest.approx(b_ref, rel=1e-9, abs=1e-12)
    # The outputs CGLS keeps are those of its weights.
    np.testing.assert_allclose(out_ref, XJ @ w_ref + b_ref, rtol=1e-9, atol=1e-9)


def test_dense_matvec_subset_writes_only_the_listed_rows():
    rng = np.random.RandomState(0)
    X = rng.randn(50, 7)
    v = rng.randn(7)
    rows = np.array([3, 0, 41, 17], dtype=np.intp)
    out = np.full(50, np.nan)
    dense_matvec_subset(X, rows, v, 0.5, out, 2)
    np.testing.assert_allclose(out[rows], X[rows] @ v + 0.5, rtol=1e-12)
    assert np.isnan(np.delete(out, rows)).all()


def test_dense_kernels_reject_mismatched_shapes():
    X = np.zeros((5, 3))
    rows = np.arange(5, dtype=np.intp)
    bounds = np.array([0, 5], dtype=np.intp)
    with pytest.raises(ValueError, match="columns"):
        dense_cgls(X, rows, bounds, np.ones(5), np.ones(5), np.zeros(5), np.zeros(4), 0.0, 1.0, 1.0, 1e-6, 10, 1)
    with pytest.raises(ValueError, match="disagree"):
        dense_cgls(X, rows, bounds, np.ones(4), np.ones(4), np.zeros(4), np.zeros(3), 0.0, 1.0, 1.0, 1e-6, 10, 1)
    with pytest.raises(ValueError, match="columns"):
        dense_matvec_subset(X, rows, np.zeros(2), 0.0, np.zeros(5), 1)


def test_dense_fit_runs_the_dense_kernel_on_rows_read_in_place(monkeypatch):
    # Dense X runs the compiled dense loop on its rows in place: no other kernel and no copy of the active rows,
    # on any active set (TSVM-like fits have few active rows).
    X, y, cost, rows, alpha = _problem(3)
    calls = _spy_on_the_dense_kernel(monkeypatch)

    def no_slice(*args):
        raise AssertionError("the active rows of dense X were copied")

    monkeypatch.setattr(_rowblocks.RowSlicer, "take", no_slice)
    res = l2_svm_mfn(X, np.sign(X[:, 0] + 0.1), np.full(X.shape[0], 1.0 / X.shape[0]), alpha=1e-2)
    assert res.converged
    assert res.n_cg_iter > 0 and calls


def test_fortran_ordered_input_is_copied_once_and_not_modified():
    rng = np.random.RandomState(1)
    X = np.asfortranarray(rng.rand(60, 5))
    before = X.copy()
    Xc = as_float64_design(X)
    assert Xc.flags.c_contiguous
    np.testing.assert_array_equal(Xc, before)
    assert as_float64_design(Xc) is Xc  # no copy of C-ordered float64 data
    y = np.where(X[:, 0] > 0.5, 1, 0)
    y_semi = np.where(np.arange(60) % 4 == 0, y, -1)
    a = DeterministicAnnealingSVC(alpha=1e-2).fit(X, y_semi)
    b = DeterministicAnnealingSVC(alpha=1e-2).fit(np.ascontiguousarray(X), y_semi)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_min_block_nnz_is_what_dense_rows_split_on():
    # A dense fit's blocks follow MIN_BLOCK_NNZ as CSR ones do: below it one block, whatever n_threads.
    from skssl.svm.kernels._rowblocks import DenseRows

    X = np.zeros((100, 10))
    assert DenseRows(X, np.arange(100, dtype=np.intp), 4).n_blocks == max(1, min(4, 1000 // MIN_BLOCK_NNZ))
    big = np.zeros((MIN_BLOCK_NNZ // 10 * 3, 10))
    rows = np.arange(big.shape[0], dtype=np.intp)
    dr = DenseRows(big, rows, 2)
    assert dr.n_blocks == 2 and dr.bounds[0] == 0 and dr.bounds[-1] == rows.size


@pytest.mark.parametrize("seed", range(20))
def test_the_dense_kernels_refuse_rows_outside_x_before_reading(seed):
    from skssl.svm._csr_kernels import dense_cgls, dense_matvec_subset

    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.normal(size=(6, 3)))
    bad = np.array([0, int(rng.choice([-1, 6, 7, 10**6]))], dtype=np.intp)
    with pytest.raises(ValueError, match="rows must lie"):
        dense_matvec_subset(X, bad, np.zeros(3), 0.0, np.zeros(6), 1)
    with pytest.raises(ValueError, match="rows must lie"):
        dense_cgls(
            X,
            bad,
            np.array([0, 2], dtype=np.intp),
            np.full(2, 0.5),
            np.ones(2),
            np.zeros(2),
            np.zeros(3),
            0.0,
            1e-2,
            1e-2,
            1e-6,
            5,
            1,
        )

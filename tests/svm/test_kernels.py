"""The compiled kernels (CGLS loop, line search, DA's mean belief) against the numpy oracles of tests/svm/_oracle.py."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from skssl.svm.solvers._da import optimize_p
from skssl.svm.kernels._kernels import belief_mean, belief_sums, csr_cgls, dense_cgls, line_search_terms
from skssl.svm.solvers._mfn import cgls

from ._oracle import cgls as oracle_cgls
from ._oracle import line_search_sorted as _line_search_sorted


def _cgls_problem(rng):
    n, d = rng.randint(5, 300), rng.randint(3, 200)
    X = sp.random(n, d, density=rng.uniform(0.02, 0.3), format="csr", random_state=rng)
    X.data *= rng.choice([0.1, 1.0, 10.0])
    cost = rng.uniform(0.0, 2.0, n) * (rng.rand(n) > 0.2)  # some zero costs, as CGLS on all rows has
    target = np.sign(rng.randn(n)) * rng.choice([1.0, 0.3], n)
    w = rng.randn(d) * rng.choice([0.0, 0.1])
    b = rng.randn() * 0.1
    return X, cost, target, w, b, 10.0 ** rng.uniform(-4, 0)


def _python_cgls(monkeypatch, X, cost, target, w, b, alpha, eps, max_iter):
    out = X @ w + b
    w = w.copy()
    b, ok, n = oracle_cgls(X, cost, target, out, w, b, alpha, eps, max_iter)
    return w, b, out, ok, n


@pytest.mark.parametrize("seed", range(40))
def test_compiled_cgls_solves_the_system_the_python_loop_solves(seed, monkeypatch):
    rng = np.random.RandomState(seed)
    X, cost, target, w0, b0, alpha = _cgls_problem(rng)
    eps = rng.choice([1e-2, 1e-6, 1e-10])
    w_ref, b_ref, _, ok_ref, n_ref = _python_cgls(monkeypatch, X, cost, target, w0, b0, alpha, eps, 10000)
    A = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])  # the bias column, only in the test
    for n_blocks in (1, 2, 3):
        cuts = np.searchsorted(X.indptr, X.nnz * np.arange(1, n_blocks) / n_blocks)
        bounds = np.unique(np.concatenate([[0], cuts, [X.shape[0]]])).astype(np.intp)
        w, out = w0.copy(), X @ w0 + b0
        b, ok, n = csr_cgls(X.data, X.indices, X.indptr, bounds, cost, target, out, w, b0, alpha, alpha, eps, 10000, 2)
        assert ok and ok_ref
        # The outputs kept up to date are those of the weights, and the relative stopping rule holds
        # when the residual is computed afresh (up to the rounding the carried residual accumulates).
        np.testing.assert_allclose(out, X @ w + b, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(out).max()))
        z = cost * (target - out)
        r = A.T @ z - alpha * np.append(w, b)
        assert r @ r <= (1.01 * eps) ** 2 * (z @ z) + 1e-24
        # The iteration counts agree with the Python loop's up to rounding: CG amplifies the order of its
        # sums on an ill-conditioned system, and the last iterations hover at the threshold.
        assert abs(n - n_ref) <= max(2, n_ref // 10)


def test_compiled_cgls_on_one_block_is_the_python_loop_up_to_rounding(monkeypatch):
    rng = np.random.RandomState(7)
    X = sp.random(500, 80, density=0.1, format="csr", random_state=rng)
    cost, target = rng.uniform(0.5, 1.0, 500), np.sign(rng.randn(500))
    w_ref, b_ref, _, ok_ref, n_ref = _python_cgls(monkeypatch, X, cost, target, np.zeros(80), 0.0, 1e-3, 1e-8, 10000)
    w, out = np.zeros(80), np.zeros(500)
    bounds = np.array([0, 500], dtype=np.intp)
    b, ok, n = csr_cgls(X.data, X.indices, X.indptr, bounds, cost, target, out, w, 0.0, 1e-3, 1e-3, 1e-8, 10000, 1)
    assert ok and ok_ref and n == n_ref > 5
    np.testing.assert_allclose(w, w_ref, rtol=1e-8, atol=1e-12)
    assert b == pytest.approx(b_ref, rel=1e-8)


@pytest.mark.parametrize("kind", ["csr int32", "csr int64", "dense rows"])
@pytest.mark.parametrize("seed", range(8))
def test_every_kind_of_rows_runs_the_oracles_cgls(kind, seed):
    # The one compiled loop on each kind of rows it is compiled for, against the numpy oracle on the same system:
    # CSR rows with either index type, and dense rows listed out of order and read in place.
    rng = np.random.RandomState(seed)
    X, cost, target, w0, b0, alpha = _cgls_problem(rng)
    n = X.shape[0]
    bounds = np.unique(np.array([0, n // 3, n], dtype=np.intp))
    w, out = w0.copy(), X @ w0 + b0
    w_ref, out_ref = w0.copy(), out.copy()
    b_ref, ok_ref, n_ref = oracle_cgls(X, cost, target, out_ref, w_ref, b0, alpha, 1e-8, 10000)
    if kind == "dense rows":
        order = rng.permutation(n).astype(np.intp)
        stored = np.empty((n, X.shape[1]))
        stored[order] = X.toarray()  # row i of the system is stored at row order[i]
        b, ok, k = dense_cgls(stored, order, bounds, cost, target, out, w, b0, alpha, alpha, 1e-8, 10000, 2)
    else:
        dtype = np.int32 if kind == "csr int32" else np.int64
        indices, indptr = X.indices.astype(dtype), X.indptr.astype(dtype)
        b, ok, k = csr_cgls(X.data, indices, indptr, bounds, cost, target, out, w, b0, alpha, alpha, 1e-8, 10000, 2)
    assert ok and ok_ref and abs(k - n_ref) <= max(2, n_ref // 10)
    scale = max(1.0, np.abs(w_ref).max())
    np.testing.assert_allclose(w, w_ref, rtol=1e-6, atol=1e-6 * scale)
    np.testing.assert_allclose(out, X @ w + b, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(out).max()))


def _terms(rng, n):
    o = rng.randn(n) * rng.choice([0.5, 2.0, 5.0])
    o_bar = o + rng.randn(n) * rng.choice([0.1, 1.0, 3.0])
    if rng.rand() < 0.4:  # ties: many breakpoints at the same step
        o, o_bar = np.round(o, 1), np.round(o_bar, 1)
    y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    cost = rng.uniform(0.0, 2.0, n) * (rng.rand(n) > 0.1)
    return o, o_bar, y, cost


@pytest.mark.parametrize("seed", range(300))
def test_line_search_by_selection_finds_the_sorted_walks_step(seed):
    rng = np.random.RandomState(seed)
    o, o_bar, y, cost = _terms(rng, rng.randint(0, 400))
    L = -abs(rng.randn()) * rng.choice([1e-3, 1.0])
    R = L + abs(rng.randn()) * rng.choice([0.01, 1.0])
    got = line_search_terms(o, o_bar, y, cost, L, R)
    want = _line_search_sorted(L, R, o, o_bar, y, cost)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_line_search_by_selection_on_a_large_problem_is_the_root_of_the_slope():
    rng = np.random.RandomState(0)
    o, o_bar, y, cost = _terms(rng, 20000)

    def slope(t):
        ot = o + t * (o_bar - o)
        act = y * ot < 1.0
        return L + t * (R - L) + ((ot - y) * cost * (o_bar - o))[act].sum()

    L, R = 0.0, 0.5
    L = -slope(0.0) - 1.0  # a descent direction, as a Newton step gives
    R = L + 0.5
    delta = line_search_terms(o, o_bar, y, cost, L, R)
    assert delta > 0
    assert slope(delta) == pytest.approx(0.0, abs=1e-9 * (1 + np.abs(cost * (o_bar - o)).sum()))
    assert delta == pytest.approx(_line_search_sorted(L, R, o, o_bar, y, cost), rel=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_belief_mean_is_the_mean_of_the_expit(seed):
    rng = np.random.RandomState(seed)
    n = rng.choice([1, 50, 5000, 20000])
    g = rng.randn(n) * rng.choice([0.1, 3.0, 1e3])
    weight = rng.uniform(0.0, 2.0, n)
    T = 10.0 ** rng.uniform(-6, 1)
    nu = rng.randn() * g.std()
    for n_threads in (1, 2):
        assert belief_mean(nu, g, T, np.empty(0), n_threads) == pytest.approx(np.mean(expit((nu - g) / T)), abs=1e-13)
        want = np.average(expit((nu - g) / T), weights=weight)
        assert belief_mean(nu, g, T, weight, n_threads) == pytest.approx(want, abs=1e-13)


@pytest.mark.parametrize("seed", range(20))
def test_belief_kernels_refuse_weights_of_another_length(seed):
    # The kernels read weight[i] for every gap i: a shorter array would be read past its end.
    rng = np.random.RandomState(seed)
    n = rng.randint(1, 9000)
    g = rng.randn(n)
    wrong = rng.choice([m for m in (1, n - 1, n + 1, 2 * n) if m > 0 and m != n])
    weight = rng.rand(wrong)
    with pytest.raises(ValueError, match="entries for"):
        belief_sums(rng.randn(3), g, 0.5, weight, 2)
    with pytest.raises(ValueError, match="entries for"):
        belief_mean(0.0, g, 0.5, weight, 2)


@pytest.mark.parametrize("seed", range(10))
def test_belief_sums_are_the_sums_of_the_expit_at_each_threshold(seed):
    rng = np.random.RandomState(seed)
    n = rng.choice([0, 1, 50, 9000])
    g = rng.randn(n) * rng.choice([0.1, 3.0, 1e3])
    weight = rng.uniform(0.0, 2.0, n)
    T = 10.0 ** rng.uniform(-6, 1)
    xs = rng.randn(rng.choice([1, 9])) * (g.std() if n else 1.0)
    p = expit((xs[:, None] - g[None, :]) / T)
    for w, want_w in ((np.empty(0), np.ones(n)), (weight, weight)):
        want = np.c_[p @ want_w, (p * (1.0 - p)) @ want_w]
        one = belief_sums(xs, g, T, w, 1)
        np.testing.assert_allclose(one, want, rtol=1e-12, atol=1e-12 * max(want_w.sum(), 1.0))
        three = belief_sums(xs, g, T, w, 3)
        np.testing.assert_allclose(three, one, rtol=1e-12, atol=1e-12 * max(want_w.sum(), 1.0))


def test_p_step_on_two_threads_meets_the_same_constraint():
    rng = np.random.RandomState(0)
    g = rng.randn(30000)
    p1, p2 = optimize_p(g, 0.05, 0.3), optimize_p(g, 0.05, 0.3, n_threads=2)
    assert p2.mean() == pytest.approx(0.3, abs=1e-10)
    np.testing.assert_allclose(p2, p1, atol=1e-9)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_compiled_cgls_takes_int64_indices_and_read_only_data(index_dtype, monkeypatch):
    rng = np.random.RandomState(3)
    X = sp.random(200, 50, density=0.1, format="csr", random_state=rng)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    cost, target = rng.uniform(0.5, 1.0, 200), np.sign(rng.randn(200))
    before = [a.copy() for a in (X.data, X.indices, X.indptr, cost, target)]
    for a in (X.data, X.indices, X.indptr, cost, target):  # memory-mapped data are read-only
        a.flags.writeable = False
    w_ref, b_ref, _, _, _ = _python_cgls(monkeypatch, X, cost, target, np.zeros(50), 0.0, 1e-2, 1e-8, 10000)
    w, out = np.zeros(50), np.zeros(200)
    b, ok, _ = cgls(X, cost, target, out, w, 0.0, 1e-2, 1e-8, 10000)  # the compiled path
    assert ok
    np.testing.assert_allclose(w, w_ref, rtol=1e-8, atol=1e-12)
    for a, b0 in zip((X.data, X.indices, X.indptr, cost, target), before):
        np.testing.assert_array_equal(a, b0)


@pytest.mark.skipif(
    os.environ.get("SKSSL_CHECKED_KERNELS") != "1",
    reason="needs the kernels built with bounds checks (SKSSL_CHECKED_KERNELS=1 python setup.py build_ext "
    "--inplace); in a release build this call would read and write out of bounds",
)
def test_the_checked_build_catches_an_index_out_of_bounds(monkeypatch):
    """The build that CI runs the kernel tests under does see a bad index: the test run can fail."""
    caught = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: caught.append(info.exc_type))
    X = sp.random(50, 10, density=0.3, format="csr", random_state=0)
    X.indices[3] = 10  # w has 10 entries
    n = X.shape[0]
    bounds = np.array([0, 25, 50], dtype=np.intp)
    csr_cgls(
        X.data,
        X.indices,
        X.indptr,
        bounds,
        np.ones(n),
        np.ones(n),
        np.zeros(n),
        np.zeros(10),
        0.0,
        1e-3,
        1e-3,
        1e-6,
        3,
        2,
    )
    assert IndexError in caught


@pytest.mark.skipif(
    os.environ.get("SKSSL_CHECKED_KERNELS") != "1",
    reason="needs the kernels built with bounds checks (SKSSL_CHECKED_KERNELS=1 python setup.py build_ext "
    "--inplace); in a release build this call would read and write out of bounds",
)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_the_checked_build_catches_a_row_pointer_out_of_bounds(monkeypatch, index_dtype):
    """The row pointers the kernels follow are checked too, in either index type, in products and in CGLS."""
    from skssl.svm.kernels._kernels import csr_matvec_blocks

    caught = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: caught.append(info.exc_type))
    X = sp.random(50, 10, density=0.3, format="csr", random_state=0)
    indices, indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    indptr[-1] = X.nnz + 7  # the last row runs past the stored values
    n = X.shape[0]
    bounds = np.array([0, 25, 50], dtype=np.intp)  # the bad row in the second block: an OpenMP worker's report
    csr_matvec_blocks(X.data, indices, indptr, bounds, np.ones(10), np.zeros(n), 2)
    assert caught == [IndexError]
    csr_cgls(
        X.data, indices, indptr, bounds, np.ones(n), np.ones(n), np.zeros(n), np.zeros(10), 0.0, 1e-3, 1e-3, 1e-6, 3, 2
    )
    assert len(caught) > 1 and set(caught) == {IndexError}


def test_the_build_says_whether_its_indices_are_checked():
    from skssl.svm import _csr_kernels

    assert _csr_kernels.CHECKED is (os.environ.get("SKSSL_CHECKED_KERNELS") == "1")


def test_skssl_svm_without_the_built_kernels_raises_an_import_error_that_says_how_to_build():
    # A source tree run without build_ext: no fallback, a clear error at import of skssl.svm.
    code = (
        "import sys\n"
        "sys.modules['skssl.svm._csr_kernels'] = None\n"
        "try:\n"
        "    import skssl.svm\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    print('imported')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "not built" in out and "build_ext --inplace" in out and "pip install -e ." in out

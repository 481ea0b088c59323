"""l2-SVM-MFN, CGLS and the line search against independent references."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar

from skssl.svm.solvers._mfn import (
    BIG_EPSILON,
    EPSILON,
    CGTolerance,
    cgls,
    l2_svm_mfn,
    line_search,
    mfn_objective,
)
from skssl.svm.kernels._validation import as_float64_design


def _problem(seed, n_rows=150, n_features=60, density=0.08, paired=False):
    rng = np.random.RandomState(seed)
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng)
    X.data = rng.randn(X.nnz)
    if paired:  # DA-like: the last half of the rows carry two terms (+1 and -1)
        half = n_rows // 2
        rows = np.concatenate([np.arange(n_rows), np.arange(half, n_rows)])
        y = np.concatenate([np.where(rng.rand(n_rows) > 0.5, 1.0, -1.0), -np.ones(n_rows - half)])
        y[half:n_rows] = 1.0
    else:
        rows = None
        y = np.where(rng.rand(n_rows) > 0.4, 1.0, -1.0)
    cost = rng.uniform(0.1, 2.0, size=y.size) / n_rows
    return X, y, cost, rows


def _objective_and_gradient(X, y, cost, rows, alpha):
    r = np.arange(X.shape[0]) if rows is None else rows

    def fun(v):
        w, b = v[:-1], v[-1]
        o = (X @ w + b)[r]
        slack = np.maximum(0.0, 1.0 - y * o)
        F = 0.5 * (alpha * (w @ w + b * b) + cost @ (slack * slack))
        g_terms = -cost * slack * y
        g_rows = np.bincount(r, weights=g_terms, minlength=X.shape[0])
        return F, np.concatenate([X.T @ g_rows + alpha * w, [g_rows.sum() + alpha * b]])

    return fun


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("alpha", [1e-3, 1e-1])
def test_mfn_matches_lbfgsb(seed, paired, alpha):
    X, y, cost, rows = _problem(seed, paired=paired)
    res = l2_svm_mfn(X, y, cost, alpha=alpha, rows=rows)
    fun = _objective_and_gradient(X, y, cost, rows, alpha)
    ref = minimize(
        fun,
        np.zeros(X.shape[1] + 1),
        jac=True,
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20000, "maxcor": 30},
    )
    F_mfn, grad = fun(np.concatenate([res.w, [res.b]]))
    assert res.converged
    assert abs(F_mfn - ref.fun) <= 1e-6 * abs(ref.fun)
    assert F_mfn <= ref.fun * (1 + 1e-9)  # MFN is at least as good as L-BFGS-B
    # The gradient at the MFN solution is ~0 relative to the gradient at w = 0.
    _, grad0 = fun(np.zeros(X.shape[1] + 1))
    assert np.linalg.norm(grad) <= 1e-5 * np.linalg.norm(grad0)
    assert np.isclose(res.objective, F_mfn, rtol=1e-12)
    np.testing.assert_allclose(res.outputs, X @ res.w + res.b, rtol=1e-9, atol=1e-12)
    scale = np.linalg.norm(ref.x)
    np.testing.assert_allclose(np.concatenate([res.w, [res.b]]), ref.x, atol=1e-4 * scale)


def test_mfn_seeded_from_solution_stays():
    X, y, cost, _ = _problem(7)
    res = l2_svm_mfn(X, y, cost, alpha=1e-2)
    state = CGTolerance(EPSILON)
    again = l2_svm_mfn(X, y, cost, alpha=1e-2, w=res.w, b=res.b, first=False, tolerance=state)
    assert again.n_iter <= 2
    assert again.objective <= res.objective * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_cgls_solves_the_regularized_least_squares_system(seed):
    rng = np.random.RandomState(seed)
    X = sp.random(40, 25, density=0.2, format="csr", random_state=rng)
    cost = rng.uniform(0.1, 1.0, 40)
    target = rng.randn(40)
    alpha = 0.05
    w = rng.randn(25) * 0.1  # a seed away from the solution
    b = 0.3
    out = X @ w + b
    b, ok, n = cgls(X, cost, target, out, w, b, alpha, 1e-12, 10000)
    # Direct solve with the bias column appended (only in the test).
    A = np.hstack([X.toarray(), np.ones((40, 1))])
    M = alpha * np.eye(26) + A.T @ (cost[:, None] * A)
    exact = np.linalg.solve(M, A.T @ (cost * target))
    assert ok and n >= 1
    np.testing.assert_allclose(np.concatenate([w, [b]]), exact, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(out, A @ exact, rtol=1e-8, atol=1e-10)


def test_cgls_relative_stop_rule_and_cap():
    rng = np.random.RandomState(0)
    X = sp.random(60, 30, density=0.3, format="csr", random_state=rng)
    cost = np.full(60, 1 / 60)
    target = np.sign(rng.randn(60))
    w = np.zeros(30)
    _, ok, n = cgls(X, cost, target, X @ w, w, 0.0, 1e-3, 1e-9, 3)
    assert not ok and n == 3
    w = np.zeros(30)
    out = X @ w
    b, ok, n = cgls(X, cost, target, out, w, 0.0, 1e-3, BIG_EPSILON, 10000)
    z = cost * (target - out)
    r = np.concatenate([X.T @ z - 1e-3 * w, [z.sum() - 1e-3 * b]])
    assert ok and r @ r < BIG_EPSILON**2 * (z @ z)


@pytest.mark.parametrize("seed", range(6))
def test_line_search_equals_brute_force(seed):
    rng = np.random.RandomState(seed)
    n, d = 80, 10
    A = rng.randn(n, d)
    y = np.where(rng.rand(n) > 0.5, 1.0, -1.0)
    cost = rng.uniform(0.1, 1.0, n) / n
    alpha = 1e-2
    w, b = rng.randn(d) * 0.3, 0.1
    w_bar, b_bar = rng.randn(d) * 0.5, -0.2
    o, o_bar = A @ w + b, A @ w_bar + b_bar
    delta = line_search(w, w_bar, b, b_bar, alpha, o, o_bar, y, cost)

    def phi(t):
        wt, bt = w + t * (w_bar - w), b + t * (b_bar - b)
        return mfn_objective(wt, bt, A @ wt + bt, y, cost, alpha)

    ref = minimize_scalar(phi, bounds=(0.0, 50.0), method="bounded", options={"xatol": 1e-12})
    assert delta == pytest.approx(ref.x, rel=1e-6, abs=1e-8)
    assert phi(delta) <= ref.fun + 1e-14


def test_line_search_without_breakpoints_is_the_quadratic_minimum():
    # All terms stay active along the segment: phi is one quadratic.
    rng = np.random.RandomState(3)
    A = rng.randn(20, 4) * 0.01
    y = np.ones(20)
    cost = np.full(20, 0.05)
    w, w_bar = np.zeros(4), rng.randn(4) * 0.01
    delta = line_search(w, w_bar, 0.0, 0.0, 1.0, A @ w, A @ w_bar, y, cost)
    grid = np.linspace(0, 3, 30001)
    vals = [mfn_objective(w + t * (w_bar - w), 0.0, A @ (w + t * (w_bar - w)), y, cost, 1.0) for t in grid]
    assert delta == pytest.approx(grid[int(np.argmin(vals))], abs=2e-4)


def test_first_call_starts_big_epsilon_and_switches_to_small():
    X, y, cost, _ = _problem(1)
    state = CGTolerance(EPSILON)
    l2_svm_mfn(X, y, cost, alpha=1e-3, tolerance=state, first=True)
    # The first call reset the state to BIG_EPSILON and, on reaching
    # optimality at that tolerance, switched it to EPSILON (heuristic 2).
    assert state.eps == EPSILON


def test_seeded_call_inherits_the_tolerance_it_is_given():
    # SVMlin's shared eps: a seeded call starts from the state's eps and, at
    # BIG_EPSILON, still switches before declaring optimality.
    X, y, cost, _ = _problem(2)
    res = l2_svm_mfn(X, y, cost, alpha=1e-3)
    y2 = y.copy()
    y2[:5] *= -1
    state = CGTolerance(BIG_EPSILON)
    seeded = l2_svm_mfn(X, y2, cost, alpha=1e-3, w=res.w, b=res.b, first=False, tolerance=state)
    assert state.eps == EPSILON and seeded.converged
    fresh = l2_svm_mfn(X, y2, cost, alpha=1e-3)
    assert seeded.objective == pytest.approx(fresh.objective, rel=1e-7)


def test_sparse_dense_float32_same_solution():
    X, y, cost, rows = _problem(5, paired=True)
    sparse = l2_svm_mfn(X, y, cost, alpha=1e-2, rows=rows)
    dense = l2_svm_mfn(X.toarray(), y, cost, alpha=1e-2, rows=rows)
    X32 = as_float64_design(X.astype(np.float32))
    assert X32.dtype == np.float64 and sp.issparse(X32)
    single = l2_svm_mfn(X32, y, cost, alpha=1e-2, rows=rows)
    # Equal up to the CGLS tolerance (dense and sparse rows may take the
    # slicing and the zero-cost paths at different steps).
    np.testing.assert_allclose(dense.w, sparse.w, rtol=1e-6, atol=1e-8)
    assert dense.b == pytest.approx(sparse.b, rel=1e-6, abs=1e-8)
    assert dense.objective == pytest.approx(sparse.objective, rel=1e-10)
    np.testing.assert_allclose(single.w, sparse.w, rtol=1e-4, atol=1e-5)


def test_inputs_not_modified():
    X, y, cost, rows = _problem(6, paired=True)
    copies = [X.copy(), y.copy(), cost.copy(), rows.copy()]
    w0 = np.ones(X.shape[1]) * 0.01
    w0_copy = w0.copy()
    o0 = X @ w0
    o0_copy = o0.copy()
    l2_svm_mfn(X, y, cost, alpha=1e-2, rows=rows, w=w0, outputs=o0, first=False, tolerance=CGTolerance())
    assert (X != copies[0]).nnz == 0
    for a, b in zip([y, cost, rows, w0, o0], copies[1:] + [w0_copy, o0_copy]):
        np.testing.assert_array_equal(a, b)


def test_empty_rows_and_columns_and_huge_values():
    X, y, cost, _ = _problem(8)
    X = X.tolil()
    X[3, :] = 0
    X[:, 5] = 0
    X[10, :4] = 1e10
    X = X.tocsr()
    with np.errstate(all="raise"):
        res = l2_svm_mfn(X, y, cost, alpha=1e-2)
    assert res.converged and np.all(np.isfinite(res.w)) and np.isfinite(res.b) and res.w[5] == 0.0
    # The huge row is fitted like any other (its margin is met, or it is a support vector).
    assert y[10] * res.outputs[10] == pytest.approx(1.0, abs=1e-3) or y[10] * res.outputs[10] > 1
    fun = _objective_and_gradient(X, y, cost, None, 1e-2)
    # Not worse than the solution of the same problem without the huge row's pull.
    assert res.objective <= fun(np.zeros(X.shape[1] + 1))[0]


@pytest.mark.parametrize("paired", [False, True])
def test_slicing_and_zero_cost_paths_agree(monkeypatch, paired):
    from skssl.svm.solvers import _mfn

    X, y, cost, rows = _problem(9, paired=paired)
    monkeypatch.setattr(_mfn, "SLICE_FRACTION", 2.0)  # always slice the active rows
    sliced = l2_svm_mfn(X, y, cost, alpha=1e-2, rows=rows)
    monkeypatch.setattr(_mfn, "SLICE_FRACTION", 0.0)  # never slice: zero costs instead
    full = l2_svm_mfn(X, y, cost, alpha=1e-2, rows=rows)
    np.testing.assert_allclose(full.w, sliced.w, rtol=1e-6, atol=1e-8)
    assert full.objective == pytest.approx(sliced.objective, rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_outputs_are_those_of_the_weights(seed, paired, n_threads, monkeypatch):
    """Only the inactive rows' outputs are recomputed after CGLS: every output must still be X w + b."""
    from skssl.svm.kernels import _rowblocks
    from skssl.svm.solvers import _mfn

    X, y, cost, rows = _problem(seed, n_rows=400, n_features=80, paired=paired)
    monkeypatch.setattr(_rowblocks, "MIN_BLOCK_NNZ", 10)  # blocks even on this small matrix
    with _rowblocks.fit_threads(n_threads) as schedule:
        res = l2_svm_mfn(X, y, cost, alpha=1e-2, rows=rows, schedule=schedule, n_threads=n_threads)
    np.testing.assert_allclose(res.outputs, X @ res.w + res.b, rtol=0, atol=1e-12)
    # The partial recomputation agrees with the full one at any active set.
    rng = np.random.RandomState(seed)
    w, b = rng.randn(80), 0.3
    J = np.flatnonzero(rng.rand(400) < rng.uniform(0.05, 0.95))
    full = X @ w + b
    got = _mfn._outputs_after_cgls(X, J, full[J].copy(), w, b, n_threads)
    np.testing.assert_array_equal(got, full)
    tracked = full.copy()  # CGLS ran on every row: its outputs are used as they are, no product
    assert _mfn._outputs_after_cgls(X, np.arange(400), tracked, w, b, n_threads) is tracked

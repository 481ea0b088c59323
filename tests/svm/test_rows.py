"""The row-backend protocol of l2-SVM-MFN's Newton loop: the loop is one, the backends are interchangeable."""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm.solvers._mfn import (
    EPSILON,
    CGTolerance,
    MemoryRows,
    l2_svm_mfn,
    line_search,
    mfn_objective,
    newton_solve,
)
from skssl.svm.solvers._rows import NewtonRows


class NumpyRows(NewtonRows):
    """A backend of its own: dense numpy, the Newton system solved exactly by ``np.linalg.solve``."""

    def __init__(self, X, y, cost, rows=None):
        self.X, self.y, self.cost = X, y, cost
        self.rows = np.arange(X.shape[0]) if rows is None else rows
        self.n_features = X.shape[1]
        self.x_norm = float(np.linalg.norm(X))
        self.outputs = np.zeros(X.shape[0])
        self.calls = []

    def objective(self, w, b, alpha, alpha_b):
        return mfn_objective(w, b, self.outputs, self.y, self.cost, alpha, self.rows, alpha_b)

    def newton_system(self):
        self.calls.append("newton_system")
        self.active = self.y * self.outputs[self.rows] < 1.0
        return int(np.unique(self.rows[self.active]).size)

    def cgls(self, w, b, alpha, alpha_b, eps, max_iter, seeded):
        self.calls.append("cgls")
        Z = np.hstack([self.X, np.ones((self.X.shape[0], 1))])[self.rows[self.active]]
        c, t = self.cost[self.active], self.y[self.active]
        D = np.diag(np.r_[np.full(self.n_features, alpha), alpha_b])
        v = np.linalg.solve(D + Z.T @ (c[:, None] * Z), Z.T @ (c * t))
        return v[:-1], float(v[-1]), True, 1

    def newton_point(self, w_bar, b_bar, eps):
        self.calls.append("newton_point")
        self.o_bar = self.X @ w_bar + b_bar
        yo = self.y * self.o_bar[self.rows]
        return bool(np.all(yo[self.active] <= 1.0 + eps) and np.all(yo[~self.active] >= 1.0 - eps))

    def restart(self):
        self.calls.append("restart")

    def line_search(self, w, w_bar, b, b_bar, alpha, alpha_b, count):
        self.calls.append("line_search")
        o, o_bar = self.outputs[self.rows], self.o_bar[self.rows]
        return line_search(w, w_bar, b, b_bar, alpha, o, o_bar, self.y, self.cost, alpha_b), None

    def step(self, delta):
        self.calls.append("step")
        self.outputs = self.outputs + delta * (self.o_bar - self.outputs)

    def accept(self):
        self.calls.append("accept")
        self.outputs = self.o_bar


def _problem(seed, paired):
    rng = np.random.RandomState(seed)
    X = rng.randn(80, 6)
    y = np.where(X @ rng.randn(6) + 0.3 * rng.randn(80) > 0, 1.0, -1.0)
    rows = None
    if paired:  # DA's terms: the last 30 rows as +1 and as -1
        rows = np.concatenate([np.arange(80), np.arange(50, 80)])
        y = np.concatenate([y[:50], np.ones(30), -np.ones(30)])
    cost = rng.uniform(0.2, 1.0, size=y.size) / y.size
    return X, y, cost, rows


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_a_backend_of_its_own_reaches_the_in_memory_optimum(seed, paired):
    """The loop runs on any NewtonRows; with an exact inner solve it stops at l2-SVM-MFN's point."""
    X, y, cost, rows = _problem(seed, paired)
    ref = l2_svm_mfn(X, y, cost, alpha=1e-2, rows=rows)
    backend = NumpyRows(X, y, cost, rows)
    res = newton_solve(backend, alpha=1e-2)
    assert res.converged
    np.testing.assert_allclose(res.w, ref.w, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(res.b, ref.b, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(res.objective, ref.objective, rtol=1e-9)
    assert res.outputs is backend.outputs
    # Each Newton step builds its system, solves it and tests its Newton point; a re-solve at EPSILON reuses the
    # system (restart), and the step or the acceptance follows.
    assert backend.calls.count("cgls") == res.n_iter == backend.calls.count("newton_point")
    assert backend.calls.count("newton_system") + backend.calls.count("restart") == res.n_iter
    assert backend.calls[-1] in ("accept", "step")


def test_the_in_memory_solve_is_the_loop_on_the_memory_backend():
    X, y, cost, rows = _problem(0, True)
    X = sp.csr_matrix(X)
    ref = l2_svm_mfn(X, y, cost, alpha=1e-2, rows=rows)
    w0 = np.zeros(X.shape[1])
    res = newton_solve(MemoryRows(X, y, cost, w0, 0.0, rows=rows), alpha=1e-2)
    np.testing.assert_array_equal(res.w, ref.w)
    assert (res.b, res.objective, res.n_iter, res.n_cg_iter) == (ref.b, ref.objective, ref.n_iter, ref.n_cg_iter)
    np.testing.assert_array_equal(res.outputs, ref.outputs)


def test_the_loop_stops_on_the_absolute_rule_without_a_restart_below_epsilon():
    """Seeded at the tight tolerance, an optimal Newton point is accepted at once (no restart)."""
    X, y, cost, rows = _problem(1, False)
    backend = NumpyRows(X, y, cost, rows)
    res = newton_solve(backend, alpha=1e-2, first=False, tolerance=CGTolerance(EPSILON), stop="absolute")
    assert res.converged and "restart" not in backend.calls


def test_a_backend_without_an_operation_cannot_be_made():
    class Partial(NewtonRows):
        def objective(self, w, b, alpha, alpha_b):
            return 0.0

    with pytest.raises(TypeError, match="abstract"):
        Partial()

"""Deterministic annealing: the p step, the stopping quantities, the returned minimum."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm.solvers._da import deterministic_annealing, entropy_bits, kl_bits, optimize_p
from skssl.svm.solvers._problem import S3VMProblem, transductive_cost
from skssl.svm.kernels._validation import as_float64_design


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("T", [10.0, 1.0, 1e-2, 1e-5])
@pytest.mark.parametrize("r", [0.05, 0.5, 0.93])
def test_optimize_p_meets_the_balance_constraint(seed, T, r):
    rng = np.random.RandomState(seed)
    g = rng.randn(200) * rng.choice([0.1, 4.0, 1e3])
    p = optimize_p(g, T, r)
    assert np.all((p >= 0) & (p <= 1))
    assert p.mean() == pytest.approx(r, abs=1e-9)
    # p is decreasing in g (a larger loss difference means less belief in +1).
    order = np.argsort(g)
    assert np.all(np.diff(p[order]) <= 1e-15)


def test_optimize_p_extreme_values_do_not_overflow():
    g = np.array([-1e300, 0.0, 1e300, 5.0])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        p = optimize_p(g, 1e-6, 0.5)
    assert p.mean() == pytest.approx(0.5, abs=1e-9)
    constant = optimize_p(np.full(7, 3.0), 0.1, 0.3)
    np.testing.assert_allclose(constant, 0.3, atol=1e-9)


def test_optimize_p_is_the_minimizer_of_the_lagrangian():
    # p_j minimizes p g_j + T (p log p + (1-p) log(1-p)) - nu p for the nu found.
    rng = np.random.RandomState(0)
    g, T, r = rng.randn(50), 0.7, 0.4
    p = optimize_p(g, T, r)
    nu = g + T * np.log(p / (1 - p))  # from the stationarity condition
    np.testing.assert_allclose(nu, nu[0], rtol=1e-8, atol=1e-8)  # one nu for all rows


def test_entropy_and_kl_in_bits():
    assert entropy_bits(np.array([0.5, 0.5])) == pytest.approx(1.0)
    assert entropy_bits(np.array([0.0, 1.0])) == 0.0
    assert kl_bits(np.array([0.3, 0.8]), np.array([0.3, 0.8])) == pytest.approx(0.0, abs=1e-12)
    p, q = np.array([0.9]), np.array([0.5])
    assert kl_bits(p, q) == pytest.approx(0.9 * np.log2(1.8) + 0.1 * np.log2(0.2))
    assert np.isfinite(kl_bits(np.array([0.0, 1.0]), np.array([1.0, 0.0])))


def _problem(seed, n=100, d=25):
    rng = np.random.RandomState(seed)
    y = np.where(rng.rand(n) > 0.45, 1.0, -1.0)
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng)
    X = X + sp.csr_matrix(np.outer(y, np.r_[np.ones(2), np.zeros(d - 2)]) * 0.5)
    labeled = np.zeros(n, dtype=bool)
    labeled[rng.choice(n, 8, replace=False)] = True
    y[labeled] = np.where(y[labeled] == 0, 1.0, y[labeled])
    if len(set(y[labeled])) < 2:
        labeled[np.flatnonzero(y > 0)[0]] = labeled[np.flatnonzero(y < 0)[0]] = True
    return as_float64_design(X.tocsr()), y, labeled


@pytest.mark.parametrize("seed", range(3))
def test_mean_p_is_r_at_every_step_and_the_lowest_objective_is_returned(seed):
    X, y, labeled = _problem(seed)
    steps = []
    res = deterministic_annealing(
        X,
        y,
        labeled,
        alpha=1e-2,
        unlabeled_weight=1.0,
        positive_fraction=0.4,
        callback=lambda e: e.stage == "w" and steps.append((e.temperature, e.beliefs.mean(), e.objective)),
    )
    assert len(steps) >= 2
    for _, mean_p, _ in steps:
        assert mean_p == pytest.approx(0.4, abs=1e-9)
    temps = [T for T, _, _ in steps]
    assert all(a >= b for a, b in itertools.pairwise(temps))  # annealing never heats up
    assert res.objective <= min(F for _, _, F in steps) + 1e-15
    F = transductive_cost(res.w, res.b, X @ res.w + res.b, y, labeled, 1e-2, 1.0)
    assert res.objective == pytest.approx(F, rel=1e-9)


def test_lowest_objective_not_the_last(monkeypatch):
    # Force a path whose last point is worse: the returned model must be the best.
    from skssl.svm.solvers import _da

    X, y, labeled = _problem(4)
    seen = []
    real = S3VMProblem.objective

    def noisy_cost(self, w, b, outputs):
        F = real(self, w, b, outputs) + (0.5 if len(seen) % 2 else 0.0)
        seen.append((F, w.copy()))
        return F

    monkeypatch.setattr(S3VMProblem, "objective", noisy_cost)
    res = _da.deterministic_annealing(X, y, labeled, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=0.5)
    best_F, best_w = min(seen, key=lambda t: t[0])
    assert res.objective == best_F
    np.testing.assert_array_equal(res.w, best_w)


def test_da_p_converges_to_hard_labels():
    X, y, labeled = _problem(5)
    temperatures = []
    res = deterministic_annealing(
        X,
        y,
        labeled,
        alpha=1e-2,
        unlabeled_weight=1.0,
        positive_fraction=0.5,
        callback=lambda e: e.stage == "w" and temperatures.append(e.temperature),
    )
    assert entropy_bits(res.p) <= 1e-6 or res.n_temperatures == 30
    # A "w" event follows every w-step but the first; each temperature has at least one.
    assert res.n_w_steps == 1 + len(temperatures)
    assert res.n_temperatures == len(set(temperatures))
    assert res.p.mean() == pytest.approx(0.5, abs=1e-9)

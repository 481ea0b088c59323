"""The binary S3VM problem object: its costs and objectives against formulas written out in numpy."""

import numpy as np
import pytest

from skssl.svm.solvers._mfn import mfn_objective
from skssl.svm.solvers._problem import S3VMProblem, transductive_cost


def _random_problem(seed, weighted):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(5, 60)), int(rng.integers(1, 8))
    X = rng.normal(size=(n, d))
    w, b = rng.normal(size=d), float(rng.normal())
    labeled = rng.random(n) < 0.4
    labeled[:2] = True
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[~labeled] = 7.0  # ignored
    s = rng.uniform(0.1, 4.0, n) if weighted else None
    return X, w, b, y, labeled, s, rng


def _numpy_objective(w, b, o, y, labeled, alpha, lam_u, s):
    """``1/2 (alpha (|w|^2 + b^2) + weighted mean of labeled losses + lam_u weighted mean of unlabeled ones)``."""
    s = np.ones(o.size) if s is None else s
    hinge_lab = np.maximum(0.0, 1.0 - y[labeled] * o[labeled]) ** 2
    hinge_unl = np.maximum(0.0, 1.0 - np.abs(o[~labeled])) ** 2
    F = alpha * (w @ w + b * b) + np.sum(s[labeled] * hinge_lab) / np.sum(s[labeled])
    if hinge_unl.size:
        F += lam_u * np.sum(s[~labeled] * hinge_unl) / np.sum(s[~labeled])
    return 0.5 * F


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_objective_matches_numpy_formula(seed, weighted):
    X, w, b, y, labeled, s, rng = _random_problem(seed, weighted)
    alpha, lam_u = 10.0 ** rng.uniform(-4, 0), rng.uniform(0.1, 3.0)
    o = X @ w + b
    problem = S3VMProblem(y, labeled, alpha=alpha, unlabeled_weight=lam_u, sample_weight=s)
    expected = _numpy_objective(w, b, o, y, labeled, alpha, lam_u, s)
    assert problem.objective(w, b, o) == pytest.approx(expected, rel=1e-13)
    assert transductive_cost(w, b, o, y, labeled, alpha, lam_u, s) == problem.objective(w, b, o)
    # A weight of 2 is the row counted twice.
    if weighted:
        ints = rng.integers(1, 4, y.size)
        twice = S3VMProblem(y, labeled, alpha=alpha, unlabeled_weight=lam_u, sample_weight=ints.astype(float))
        rep = np.repeat(np.arange(y.size), ints)
        copies = S3VMProblem(y[rep], labeled[rep], alpha=alpha, unlabeled_weight=lam_u)
        assert twice.objective(w, b, o) == pytest.approx(copies.objective(w, b, o[rep]), rel=1e-13)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_costs_are_normalized(seed, weighted):
    _, _, _, y, labeled, s, _ = _random_problem(seed, weighted)
    problem = S3VMProblem(y, labeled, alpha=1.0, unlabeled_weight=0.7, sample_weight=s)
    assert problem.lab_cost.sum() == pytest.approx(1.0, rel=1e-14)
    unl_cost = np.broadcast_to(problem.unlabeled_cost(), (problem.n_unl,))
    assert unl_cost.sum() == pytest.approx(0.7, rel=1e-14)
    assert np.broadcast_to(problem.unlabeled_cost(2.0), (problem.n_unl,)).sum() == pytest.approx(2.0, rel=1e-14)
    if weighted:
        np.testing.assert_allclose(problem.lab_cost, s[labeled] / s[labeled].sum(), rtol=1e-15)
        assert problem.unl_weight.mean() == pytest.approx(1.0, rel=1e-14)
    else:
        assert problem.unl_weight is None


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_belief_terms_objective(seed, weighted):
    """The expanded terms at beliefs p: labeled losses plus p l2(o) + (1 - p) l2(-o) on the unlabeled rows."""
    X, w, b, y, labeled, s, rng = _random_problem(seed, weighted)
    alpha, lam_u = 0.05, rng.uniform(0.1, 3.0)
    o = X @ w + b
    problem = S3VMProblem(y, labeled, alpha=alpha, unlabeled_weight=lam_u, sample_weight=s)
    terms = problem.belief_terms()
    p = rng.random(problem.n_unl)
    cost = terms.set_beliefs(p)
    s1 = np.ones(y.size) if s is None else s
    ou, su = o[~labeled], s1[~labeled] / s1[~labeled].sum()
    expected = 0.5 * (
        alpha * (w @ w + b * b)
        + np.sum(s1[labeled] * np.maximum(0.0, 1.0 - y[labeled] * o[labeled]) ** 2) / s1[labeled].sum()
        + lam_u * np.sum(su * (p * np.maximum(0.0, 1.0 - ou) ** 2 + (1 - p) * np.maximum(0.0, 1.0 + ou) ** 2))
    )
    assert terms.objective(w, b, o) == pytest.approx(expected, rel=1e-13)
    assert terms.objective(w, b, o) == mfn_objective(w, b, o, terms.targets, cost, alpha, terms.rows)
    # At hard beliefs that agree with the sign of the outputs, the expanded objective is transductive_cost.
    terms.set_beliefs((ou > 0).astype(float))
    assert terms.objective(w, b, o) == pytest.approx(problem.objective(w, b, o), rel=1e-13)

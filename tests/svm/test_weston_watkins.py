"""The joint multi-class l2-SVM of the safeguard's refit (Weston & Watkins' loss, squared)."""

import gc
import tracemalloc
import warnings
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.optimize
from scipy.optimize import check_grad, minimize
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.solvers import _weston_watkins
from skssl.svm.defaults._regularization import fit_rows_are_centred
from skssl.svm.safeguard._safeguard import candidate_fractions, candidates_agree
from skssl.svm.solvers._weston_watkins import JointLoss, data_curvature, data_term, fit_weston_watkins

from .._tiers import fast_first
from ._candidates import second_opinion

SEMI = [TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]


def _problem(seed, n=40, d=4, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=d)
    y = rng.integers(n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    costs = rng.uniform(0.0, 1.0, size=n) * (rng.uniform(size=n) > 0.2)
    return X, y, costs


def _loss_by_loops(X, y, costs, coef, intercept):
    """The joint loss written row by row and class by class (independent of the vectorized one)."""
    total = 0.0
    for i in range(X.shape[0]):
        scores = [float(X[i] @ coef[k] + intercept[k]) for k in range(coef.shape[0])]
        for k in range(coef.shape[0]):
            if k != y[i]:
                total += 0.5 * costs[i] * max(0.0, 1.0 - scores[y[i]] + scores[k]) ** 2
    return total


def _problem_and_model(seed, sparse):
    """A random problem of 2 to 5 classes, its rows (CSR or dense), a random model and a random direction."""
    X, y, costs = _problem(seed, n_classes=2 + seed % 4)
    n_classes, d = int(y.max()) + 1, X.shape[1]
    rng = np.random.default_rng(100 + seed)
    model = rng.normal(scale=0.5, size=(n_classes, d)), rng.normal(scale=0.5, size=n_classes)
    direction = rng.normal(size=(n_classes, d)), rng.normal(size=n_classes)
    return X, y, costs, (sp.csr_matrix(X) if sparse else X), model, direction


def _numerical_gradient(f, theta, step=1e-6):
    """Central differences of ``f``: near 0 at the minimum of a strongly convex ``f`` (then
    ``|theta - theta*| <= |grad| / alpha``)."""
    out = np.empty_like(theta)
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = step
        out[j] = (f(theta + e) - f(theta - e)) / (2 * step)
    return out


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("sparse", [False, True])
def test_data_term_is_the_loss_and_its_gradient(seed, sparse):
    X, y, costs, rows, (coef, intercept), _ = _problem_and_model(seed, sparse)
    n_classes, d = coef.shape
    loss, grad_coef, grad_intercept = data_term(rows, y, costs, coef, intercept)
    assert loss == pytest.approx(_loss_by_loops(X, y, costs, coef, intercept), rel=1e-12)

    def f(theta):
        return data_term(rows, y, costs, theta[:-n_classes].reshape(n_classes, d), theta[-n_classes:])[0]

    def g(theta):
        _, gc, gi = data_term(rows, y, costs, theta[:-n_classes].reshape(n_classes, d), theta[-n_classes:])
        return np.concatenate([gc.ravel(), gi])

    theta = np.concatenate([coef.ravel(), intercept])
    np.testing.assert_allclose(g(theta), np.concatenate([grad_coef.ravel(), grad_intercept]))
    assert check_grad(f, g, theta) < 1e-5 * max(1.0, np.linalg.norm(g(theta)))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("sparse", [False, True])
def test_data_curvature_is_the_change_of_the_gradient(seed, sparse):
    # Between the kinks the loss is quadratic: a step small enough to cross none changes the gradient by H d.
    _, y, costs, rows, (coef, intercept), (along_coef, along_intercept) = _problem_and_model(seed, sparse)
    step = 1e-7
    _, g0c, g0i = data_term(rows, y, costs, coef, intercept)
    _, g1c, g1i = data_term(rows, y, costs, coef + step * along_coef, intercept + step * along_intercept)
    hc, hi = data_curvature(rows, y, costs, coef, intercept, along_coef, along_intercept)
    np.testing.assert_allclose((g1c - g0c) / step, hc, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((g1i - g0i) / step, hi, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", fast_first(range(15)))
def test_the_fit_reaches_an_independent_minimum(seed):
    X, y, costs = _problem(seed, n=30, d=3, n_classes=3 + seed % 3)
    n_classes, d = int(y.max()) + 1, X.shape[1]
    alpha, alpha_b = 0.3, 0.05

    def objective(theta):
        coef, intercept = theta[: n_classes * d].reshape(n_classes, d), theta[n_classes * d :]
        penalty = 0.5 * alpha * np.sum(coef**2) + 0.5 * alpha_b * np.sum(intercept**2)
        return _loss_by_loops(X, y, costs, coef, intercept) + penalty

    coef, intercept, converged = fit_weston_watkins(
        lambda c, b: data_term(X, y, costs, c, b),
        lambda *a: data_curvature(X, y, costs, *a),
        np.zeros((n_classes, d)),
        np.zeros(n_classes),
        alpha,
        alpha_b,
    )
    assert converged
    ours = np.concatenate([coef.ravel(), intercept])
    reference = minimize(objective, np.zeros_like(ours), method="Powell", options={"xtol": 1e-10, "ftol": 1e-14})
    assert objective(ours) <= reference.fun + 1e-9
    # Strongly convex (alpha_b = 0.05): a gradient below 1e-5 puts ours within 2e-4 of the minimum.
    assert np.max(np.abs(_numerical_gradient(objective, ours))) < 1e-5


@pytest.mark.parametrize("seed", range(8))
def test_two_classes_at_twice_alpha_are_the_binary_l2_svm(seed):
    # The module's decision "twice the penalty": w_1 - w_0 is LinearL2SVC's weight vector at alpha.
    X, y, costs = _problem(seed, n_classes=2)
    costs = costs / costs.sum()  # LinearL2SVC scales its costs to sum to 1
    alpha, scaling = 0.05, 2.0
    coef, intercept, _ = fit_weston_watkins(
        lambda c, b: data_term(X, y, costs, c, b),
        lambda *a: data_curvature(X, y, costs, *a),
        np.zeros((2, 4)),
        np.zeros(2),
        2 * alpha,
        2 * alpha / scaling**2,
    )
    binary = LinearL2SVC(alpha=alpha, intercept_scaling=scaling, tol=1e-12).fit(X, y, sample_weight=costs)
    np.testing.assert_allclose(coef[1] - coef[0], binary.coef_[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(intercept[1] - intercept[0], binary.intercept_[0], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("sparse", [False, True])
def test_the_kept_margins_follow_the_point(sparse):
    # JointLoss keeps the margins in force for the last point's arrays: every new point, and every direction at
    # a kept point, gives data_curvature's product exactly.
    X, y, costs, rows, _, _ = _problem_and_model(3, sparse)
    n_classes, d = int(y.max()) + 1, X.shape[1]
    joint = JointLoss(rows, y, costs)
    rng = np.random.default_rng(7)
    for _ in range(4):
        coef, intercept = rng.normal(size=(n_classes, d)), rng.normal(size=n_classes)
        for _ in range(3):
            direction = rng.normal(size=(n_classes, d)), rng.normal(size=n_classes)
            ours = joint.curvature(coef, intercept, *direction)
            reference = data_curvature(rows, y, costs, coef, intercept, *direction)
            for a, b in zip(ours, reference):
                np.testing.assert_array_equal(a, b)


def test_the_refit_leaves_no_copy_of_the_model_behind():
    # A closure over the point and the step handed to scipy's brentq (which wraps it in a reference cycle) kept
    # two copies of the model alive per inexact line search until the cyclic collector ran: 34 copies of the
    # model at the peak of a 5-class refit of 200,000 features. With the collector off, nothing may stay.
    rng = np.random.default_rng(0)
    n, d, n_classes = 100, 4000, 4  # a model of 128 kB, above the few kB that the run itself leaves
    X, y = rng.normal(size=(n, d)), rng.integers(n_classes, size=n)
    joint = JointLoss(X, y, np.full(n, 1.0 / n))
    searches = []
    brentq = scipy.optimize.brentq

    def counted(*args, **kwargs):
        searches.append(1)
        return brentq(*args, **kwargs)

    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        with mock.patch("scipy.optimize.brentq", counted):
            result = fit_weston_watkins(
                joint.terms, joint.curvature, np.zeros((n_classes, d)), np.zeros(n_classes), 1.0, 1.0
            )
        del result, joint
        left = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        if enabled:
            gc.enable()
    assert len(searches) >= 10  # the line searches that leaked did run
    assert left < n_classes * d * 8, left / (n_classes * d * 8)


def test_no_cost_gives_the_zero_model():
    X, y, _ = _problem(0)
    coef, intercept, converged = fit_weston_watkins(
        lambda c, b: data_term(X, y, np.zeros(X.shape[0]), c, b),
        lambda *a: data_curvature(X, y, np.zeros(X.shape[0]), *a),
        np.ones((3, 4)),
        np.ones(3),
        1.0,
        1.0,
    )
    assert converged and not coef.any() and not intercept.any()


def _middle_class(seed, n_per_class=30):
    """Three classes along one direction, the second between the others: no line separates it from the rest."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n_per_class)
    X = np.column_stack([3.0 * (y - 1) + rng.normal(scale=0.5, size=y.size), rng.normal(size=y.size)])
    X -= X.mean(axis=0)  # standardized-like rows: the joint refit applies
    y_semi = np.full(y.size, -1)
    for k in range(3):
        y_semi[rng.choice(np.flatnonzero(y == k), 2, replace=False)] = k
    return X, y, y_semi


@pytest.mark.parametrize("seed", range(5))
def test_a_class_between_two_others_is_found(seed):
    # Why the refit is joint: under the same labels and penalty, one-vs-rest gives up a middle class (no line
    # separates it from the rest) that the joint loss ranks right.
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 30)
    X = (3.0 * y + rng.normal(scale=0.5, size=y.size))[:, None]
    alpha, costs = 0.1, np.full(y.size, 1.0 / y.size)
    one_vs_rest = LinearL2SVC(alpha=alpha).fit(X, y, sample_weight=costs).predict(X)
    assert np.mean(one_vs_rest[y == 1] == 1) < 0.5
    coef, intercept, _ = fit_weston_watkins(
        lambda c, b: data_term(X, y, costs, c, b),
        lambda *a: data_curvature(X, y, costs, *a),
        np.zeros((3, 1)),
        np.zeros(3),
        2 * alpha,
        2 * alpha,
    )
    joint = (X @ coef.T + intercept).argmax(axis=1)
    assert np.mean(joint[y == 1] == 1) >= 0.75
    assert np.mean(joint == y) >= 0.9 > np.mean(one_vs_rest == y)


def _refit_rows_by_hand(est, X, y_semi):
    """The safeguard's refit rows rebuilt from public pieces: labels, costs and the agreed rows' share."""
    labeled = y_semi != -1
    fractions = np.bincount(y_semi[labeled], minlength=3) / labeled.sum()
    base = clone(est).set_params(safeguard=None)
    predictions = [base.fit(X, y_semi).predict(X[~labeled])]
    for moved in candidate_fractions(fractions, labeled.sum()):
        predictions.append(clone(base).set_params(positive_fraction=moved).fit(X, y_semi).predict(X[~labeled]))
    predictions.append(second_opinion(est, fractions).fit(X, y_semi).predict(X[~labeled]))
    agree = candidates_agree(predictions)
    assert est.safeguard_agreement_ == pytest.approx(agree.mean())
    labels = y_semi.copy()
    agreed = np.flatnonzero(~labeled)[agree]
    labels[agreed] = predictions[0][agree]
    share = est.unlabeled_weight if agreed.size else 0.0
    costs = np.zeros(X.shape[0])
    costs[labeled] = 1.0 / labeled.sum()
    costs[agreed] = share / max(agreed.size, 1)
    return labels, costs, share


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC])
@pytest.mark.parametrize("seed", fast_first(range(4), 1))
def test_the_safe_multiclass_model_minimizes_the_joint_objective_over_the_agreed_rows(Est, seed):
    # Rebuild the candidates and the refit's rows from public pieces, then check the model against scipy.
    X, y, y_semi = _middle_class(seed, n_per_class=12)
    X[:, 1] *= 3.0  # a second direction that the candidates can dispute
    # The agreement's refit itself: "auto" would add the check on held-out labels, which may replace it.
    est = Est(alpha=0.05, unlabeled_weight=0.7, safeguard="agreement").fit(X, y_semi)
    labels, costs, share = _refit_rows_by_hand(est, X, y_semi)
    alpha = 2 * 0.05 / (1 + share)  # the refit's alpha, doubled (the module's decisions)
    scaling = est.intercept_scaling_
    keep = costs > 0

    def objective(theta):
        coef, intercept = theta[:6].reshape(3, 2), theta[6:]
        penalty = 0.5 * alpha * np.sum(coef**2) + 0.5 * alpha / scaling**2 * np.sum(intercept**2)
        return _loss_by_loops(X[keep], labels[keep], costs[keep], coef, intercept) + penalty

    ours = np.concatenate([est.coef_.ravel(), est.intercept_])
    reference = minimize(objective, np.zeros(9), method="Powell", options={"xtol": 1e-10, "ftol": 1e-14})
    assert objective(ours) <= reference.fun + 1e-9
    assert np.max(np.abs(_numerical_gradient(objective, ours))) < 1e-5


@pytest.mark.parametrize("Est", SEMI)
def test_the_multiclass_refit_is_deterministic_and_sparse_equals_dense(Est):
    X, _, y_semi = _middle_class(7)
    a, b = Est().fit(X, y_semi), Est().fit(X, y_semi)
    c = Est().fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_allclose(a.coef_, c.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(a.predict(X), c.predict(X))


def test_a_capped_refit_warns(monkeypatch):
    X, _, y_semi = _middle_class(1)
    monkeypatch.setattr(_weston_watkins, "MAX_ITER", 1)
    with pytest.warns(ConvergenceWarning, match="multi-class refit stopped"):
        TransductiveSVC().fit(X, y_semi)
    quiet = TransductiveSVC()
    quiet._warns_on_caps = False  # what the internal fits of a label check set
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        quiet.fit(X, y_semi)


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC])
@pytest.mark.parametrize("seed", range(3))
def test_rows_off_the_origin_keep_the_one_vs_rest_refit(Est, seed):
    # TF-IDF-like rows (non-negative, their mean far from the origin): the refit is one LinearL2SVC per class.
    X, _, y_semi = _middle_class(seed, n_per_class=12)
    X = np.abs(X) + 1.0
    assert not fit_rows_are_centred(X)
    est = Est(alpha=0.05, safeguard="agreement").fit(X, y_semi)  # the refit, without the check that may replace it
    y_fixed, costs, share = _refit_rows_by_hand(est, X, y_semi)
    y_fixed[costs == 0] = -1
    by_hand = LinearL2SVC(alpha=0.05 / (1 + share)).fit(X, y_fixed, sample_weight=costs)
    np.testing.assert_allclose(est.coef_, by_hand.coef_, rtol=1e-7, atol=1e-9)

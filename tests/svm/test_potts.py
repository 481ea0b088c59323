"""Potts deterministic annealing: the p-step, the annealing, the K = 2 reduction, symmetries."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from skssl.datasets import load_pcmac
from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC
from skssl.svm._da import deterministic_annealing
from skssl.svm._potts import (
    P_TOL,
    potts_annealing,
    potts_energies,
    potts_entropy_bits,
    potts_kl_bits,
    potts_objective,
    potts_p_step,
)


def _blobs(n_per_class=12, n_classes=3, n_labeled=2, seed=0, n_features=5):
    rng = np.random.RandomState(seed)
    centers = rng.randn(n_classes, n_features) * 3
    X = np.vstack([c + rng.randn(n_per_class, n_features) for c in centers])
    y = np.repeat(np.arange(n_classes), n_per_class)
    y_semi = np.full_like(y, -1)
    for k in range(n_classes):
        y_semi[np.flatnonzero(y == k)[:n_labeled]] = k
    return X, y, y_semi


# --- the p-step -------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("T", [10.0, 1.0, 1e-2, 1e-4])
@pytest.mark.parametrize("K", [2, 3, 7])
def test_p_step_meets_every_class_fraction(seed, T, K):
    rng = np.random.RandomState(seed)
    E = rng.randn(300, K) * rng.choice([0.1, 3.0, 50.0])
    r = rng.dirichlet(np.full(K, 2.0))
    P, nu = potts_p_step(E, T, r)
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-14)
    assert np.abs(P.mean(axis=0) - r).max() <= 1e-10
    assert nu[0] == 0.0
    # The softmax form with the returned multipliers.
    logits = (nu - E) / T
    expected = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P, expected, rtol=1e-9, atol=1e-300)


def _p_objective(P, E, T):
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
    return float((P * E).sum() + T * ent.sum())


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("T", [2.0, 0.3])
def test_p_step_matches_scipy_minimize_on_the_primal(seed, T):
    rng = np.random.RandomState(seed)
    u, K = 6, 3
    E = rng.randn(u, K)
    r = rng.dirichlet(np.full(K, 3.0))
    P, _ = potts_p_step(E, T, r)

    def fun(x):
        Q = np.clip(x.reshape(u, K), 1e-300, None)
        return _p_objective(Q, E, T)

    def jac(x):
        Q = np.clip(x.reshape(u, K), 1e-300, None)
        return (E + T * (np.log(Q) + 1.0)).ravel()

    constraints = [
        {"type": "eq", "fun": lambda x: x.reshape(u, K).sum(axis=1) - 1.0},
        {"type": "eq", "fun": lambda x: x.reshape(u, K).mean(axis=0)[1:] - r[1:]},
    ]
    res = minimize(
        fun,
        np.tile(r, u),
        jac=jac,
        method="SLSQP",
        bounds=[(1e-12, 1.0)] * (u * K),
        constraints=constraints,
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert res.success, res.message
    np.testing.assert_allclose(P, res.x.reshape(u, K), atol=1e-5)
    # Ours is feasible and at least as low as scipy's.
    assert _p_objective(P, E, T) <= res.fun + 1e-9


def test_p_step_reduces_to_the_binary_logistic_for_two_classes():
    from skssl.svm._da import optimize_p

    rng = np.random.RandomState(3)
    g = rng.randn(100) * 2
    T, r1 = 0.4, 0.3
    E = np.column_stack([-g / 2, g / 2])
    P, _ = potts_p_step(E, T, np.array([1 - r1, r1]))
    np.testing.assert_allclose(P[:, 1], optimize_p(g, T, r1), atol=1e-9)


@pytest.mark.parametrize("T,scale", [(1e-9, 1e6), (1e-12, 1e10), (1e-6, 1e300)])
def test_p_step_has_no_overflow_at_tiny_T_and_huge_energies(T, scale):
    rng = np.random.RandomState(0)
    E = rng.randn(40, 4) * scale
    r = np.array([0.1, 0.2, 0.3, 0.4])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        P, nu = potts_p_step(E, T, r)
    assert np.all(np.isfinite(P)) and np.all(np.isfinite(nu))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-14)
    assert np.abs(P.mean(axis=0) - r).max() <= 1e-10


def test_p_step_warm_start_gives_the_same_solution():
    rng = np.random.RandomState(1)
    E, r, T = rng.randn(200, 5), np.full(5, 0.2), 0.05
    P1, nu1 = potts_p_step(E, T, r)
    P2, nu2 = potts_p_step(E, T, r, nu=nu1 + rng.randn(5))
    np.testing.assert_allclose(P1, P2, atol=1e-9)


def test_p_step_rejects_an_overflowing_temperature():
    with pytest.raises(ValueError, match="too small"):
        potts_p_step(np.array([[0.0, 1e300]]), 1e-300, np.array([0.5, 0.5]))


def test_entropy_and_kl_extend_the_binary_rules():
    from skssl.svm._da import entropy_bits, kl_bits

    rng = np.random.RandomState(0)
    p, q = rng.rand(50), rng.rand(50)
    p[:3] = [0.0, 1.0, 1e-12]
    P, Q = np.column_stack([1 - p, p]), np.column_stack([1 - q, q])
    assert potts_entropy_bits(P) == pytest.approx(entropy_bits(p), rel=1e-12)
    assert potts_kl_bits(P, Q) == pytest.approx(kl_bits(p, q), rel=1e-9)
    assert potts_entropy_bits(np.full((4, 8), 1 / 8)) == pytest.approx(3.0)


# --- the annealing ------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_objective_never_increases_within_a_temperature(seed):
    X, _, y_semi = _blobs(seed=seed, n_classes=4)
    labeled = y_semi != -1
    trace = []
    res = potts_annealing(
        X,
        y_semi,
        labeled,
        alpha=1e-2,
        unlabeled_weight=1.0,
        class_fractions=np.full(4, 0.25),
        callback=lambda stage, T, P, J: trace.append((stage, T, J)),
    )
    assert len(trace) > 10
    # The extrapolated alternations (K >= 3) are among the steps checked.
    assert res.n_extrapolated > 0
    n_checked = 0
    for (_, T0, J0), (stage, T1, J1) in zip(trace, trace[1:]):
        if T0 == T1:
            assert J1 <= J0 + 1e-10 * abs(J0), (stage, T0, J0, J1)
            n_checked += 1
    assert n_checked > 5


def test_returns_the_lowest_objective_seen():
    X, _, y_semi = _blobs(seed=1)
    labeled = y_semi != -1
    res = potts_annealing(X, y_semi, labeled, alpha=1e-2, unlabeled_weight=1.0, class_fractions=np.full(3, 1 / 3))
    Y = np.where(y_semi[:, None] == np.arange(3), 1.0, -1.0)
    assert res.objective == pytest.approx(potts_objective(res.W, res.b, res.outputs, Y, labeled, 1e-2, 1.0))
    np.testing.assert_allclose(res.outputs, X @ res.W.T + res.b, atol=1e-10)


# --- K = 2 is the binary DA ------------------------------------------------------


@pytest.mark.slow
def test_two_classes_equal_the_binary_da_on_pcmac():
    data = load_pcmac()
    X, y = data.X_train, data.y_train
    potts = PottsDeterministicAnnealingSVC(positive_fraction=0.5).fit(X, y)
    binary = DeterministicAnnealingSVC(positive_fraction=0.5).fit(X, y)
    assert potts.objective_ == pytest.approx(binary.objective_[0], rel=1e-9)
    # SVMlin's reference DA objective on pcmac (r = 0.5).
    assert potts.objective_ == pytest.approx(0.123867, abs=1e-6)
    np.testing.assert_allclose(potts.coef_, binary.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(potts.predict(data.X_test), binary.predict(data.X_test))
    np.testing.assert_array_equal(potts.transduction_, binary.transduction_)
    assert potts.n_iter_ == binary.n_iter_


@pytest.mark.parametrize("seed", range(3))
def test_two_classes_equal_the_binary_da_and_both_problems_agree(seed):
    X, _, y_semi = _blobs(n_classes=2, seed=seed, n_per_class=15)
    labeled = y_semi != -1
    r1 = 0.5
    binary = deterministic_annealing(
        X, np.where(y_semi == 1, 1.0, -1.0), labeled, alpha=1e-2, unlabeled_weight=1.0, positive_fraction=r1
    )
    fractions = np.array([1 - r1, r1])
    kw = dict(alpha=1e-2, unlabeled_weight=1.0, class_fractions=fractions)
    mirrored = potts_annealing(X, y_semi, labeled, **kw)
    both = potts_annealing(X, y_semi, labeled, symmetric_binary=False, **kw)
    for res in (mirrored, both):
        assert res.objective == pytest.approx(binary.objective, rel=1e-9)
        np.testing.assert_allclose(res.W[1], binary.w, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(res.P[:, 1], binary.p, atol=1e-7)
    # Solving class 0 separately gives the negated class-1 model.
    np.testing.assert_allclose(both.W[0], -both.W[1], rtol=1e-6, atol=1e-9)


# --- symmetries -------------------------------------------------------------------


def _fit(X, y, **kw):
    return PottsDeterministicAnnealingSVC(alpha=1e-2, **kw).fit(X, y)


def test_permuting_classes_permutes_the_model():
    X, _, y_semi = _blobs(n_classes=4, seed=2)
    perm = np.array([2, 0, 3, 1])  # class k is renamed perm[k]
    y_perm = np.where(y_semi == -1, -1, perm[np.maximum(y_semi, 0)])
    a = _fit(X, y_semi)
    b = _fit(X, y_perm)
    np.testing.assert_allclose(b.coef_[perm], a.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b.intercept_[perm], a.intercept_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b.label_distributions_[:, perm], a.label_distributions_, atol=1e-7)
    np.testing.assert_array_equal(b.transduction_, np.where(True, perm[a.transduction_], 0))
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-9)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(2, 4))
def test_row_permutation_gives_the_same_model(seed, n_classes):
    X, _, y_semi = _blobs(n_classes=n_classes, seed=seed % 50, n_per_class=8)
    order = np.random.RandomState(seed).permutation(X.shape[0])
    a = _fit(X, y_semi)
    b = _fit(X[order], y_semi[order])
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-8)
    np.testing.assert_array_equal(b.transduction_, a.transduction_[order])
    np.testing.assert_allclose(b.label_distributions_, a.label_distributions_[order], atol=1e-6)


@settings(max_examples=5, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    names=st.lists(st.text("abcxyz", min_size=1, max_size=3), min_size=3, max_size=3, unique=True),
)
def test_label_renaming_gives_the_same_model(seed, names):
    X, _, y_semi = _blobs(n_classes=3, seed=seed % 50, n_per_class=8)
    names = np.array(names, dtype=object)
    y_named = np.where(y_semi == -1, -1, names[np.maximum(y_semi, 0)]).astype(object)
    a = _fit(X, y_semi)
    b = _fit(X, y_named)
    # classes_ is sorted: class k of ``a`` is class ``pos[k]`` of ``b``.
    pos = np.searchsorted(b.classes_.astype(str), names.astype(str))
    np.testing.assert_allclose(b.coef_[pos], a.coef_, rtol=1e-5, atol=1e-8)
    np.testing.assert_array_equal(b.transduction_, names[a.transduction_])


# --- the estimator -----------------------------------------------------------------


def test_fitted_attributes():
    X, y, y_semi = _blobs(n_classes=3, seed=4)
    clf = _fit(X, y_semi)
    unl = y_semi == -1
    assert clf.coef_.shape == (3, X.shape[1]) and clf.intercept_.shape == (3,)
    D = clf.label_distributions_
    assert D.shape == (X.shape[0], 3)
    np.testing.assert_allclose(D.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(D[~unl], np.eye(3)[y_semi[~unl]])
    # The unlabeled rows meet the estimated class fractions (2 labeled per class).
    np.testing.assert_allclose(D[unl].mean(axis=0), 1 / 3, atol=10 * P_TOL)
    np.testing.assert_array_equal(clf.transduction_[unl], D[unl].argmax(axis=1))
    assert isinstance(clf.objective_, float) and isinstance(clf.n_iter_, int)
    assert np.mean(clf.predict(X) == y) > 0.9


def test_sparse_equals_dense_and_is_deterministic():
    X, _, y_semi = _blobs(n_classes=3, seed=5)
    X[np.abs(X) < 1.0] = 0.0
    dense = _fit(X, y_semi)
    sparse = _fit(sp.csr_matrix(X), y_semi)
    again = _fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(sparse.coef_, again.coef_)


def test_energies_are_the_halved_loss_difference():
    o = np.array([[-2.0, -0.5, 0.0, 0.5, 2.0]])
    l2 = lambda z: np.maximum(0, 1 - z) ** 2  # noqa: E731
    np.testing.assert_allclose(potts_energies(o, 3.0), 1.5 * (l2(o) - l2(-o)))


@pytest.mark.parametrize(
    "fraction,match",
    [
        (0.3, "single number"),
        ([0.5, 0.5], "shape"),
        ([0.2, 0.2, 0.2], "sum to 1"),
        ([0.0, 0.5, 0.5], r"\(0, 1\)"),
    ],
)
def test_bad_class_fractions_raise(fraction, match):
    X, _, y_semi = _blobs(n_classes=3)
    with pytest.raises(ValueError, match=match):
        _fit(X, y_semi, positive_fraction=fraction)


def test_given_fractions_are_met():
    X, _, y_semi = _blobs(n_classes=3, seed=6)
    r = np.array([0.5, 0.3, 0.2])
    clf = _fit(X, y_semi, positive_fraction=r)
    np.testing.assert_allclose(clf.label_distributions_[y_semi == -1].mean(axis=0), r, atol=10 * P_TOL)


def test_caps_give_a_convergence_warning_and_n_iter_counts_temperatures():
    from sklearn.exceptions import ConvergenceWarning

    X, _, y_semi = _blobs(n_classes=3, seed=7)
    with pytest.warns(ConvergenceWarning, match="max_iter=2 temperatures"):
        clf = _fit(X, y_semi, max_iter=2)
    assert clf.n_iter_ == 2
    with pytest.warns(ConvergenceWarning, match="max_inner_iter=1"):
        _fit(X, y_semi, max_inner_iter=1)

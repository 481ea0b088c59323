"""Potts deterministic annealing: the p-step, the annealing, the K = 2 reduction, symmetries, row weights."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize

from skssl.datasets import load_pcmac
from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC
from skssl.svm import _base as svm_base
from skssl.svm.solvers import _potts_beliefs
from skssl.svm.solvers._da import deterministic_annealing, optimize_p
from skssl.svm.solvers._potts import (
    annealed_objective,
    potts_annealing,
    potts_energies,
    potts_entropy_bits,
    potts_kl_bits,
    potts_objective,
)
from skssl.svm.solvers._potts_beliefs import P_TOL, potts_p_step

from .._tiers import fast_first


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
@pytest.mark.parametrize("weighted", [False, True])
def test_p_step_meets_every_class_fraction(seed, T, K, weighted):
    rng = np.random.RandomState(seed)
    E = rng.randn(300, K) * rng.choice([0.1, 3.0, 50.0])
    r = rng.dirichlet(np.full(K, 2.0))
    s = rng.exponential(size=300) + 1e-3 if weighted else None
    P, nu = potts_p_step(E, T, r, weight=s)
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-14)
    fractions = P.mean(axis=0) if s is None else s @ P / s.sum()
    assert np.abs(fractions - r).max() <= 1e-10
    assert nu[0] == 0.0
    # The softmax form with the returned multipliers (weights do not change the form, only nu).
    logits = (nu - E) / T
    expected = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P, expected, rtol=1e-9, atol=1e-300)
    if weighted:  # only the relative weights matter
        np.testing.assert_allclose(potts_p_step(E, T, r, weight=7.5 * s)[0], P, atol=1e-9)


def _tied_energies(rng, u, K):
    """Energies of a trained model's unlabeled rows: clusters of near-identical rows and exact duplicates."""
    centers = rng.randn(rng.randint(2, 6), K) * rng.choice([0.5, 3.0])
    E = centers[rng.randint(len(centers), size=u)] + 0.05 * rng.randn(u, K)
    dup = rng.rand(u) < 0.1  # empty documents: identical outputs, so identical energies
    E[dup] = E[np.flatnonzero(dup)[0]]
    return E


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("weighted", [False, True])
def test_p_step_with_committed_rows_set_aside_equals_the_plain_newton(seed, weighted, monkeypatch):
    """At low temperature most rows are committed and the solver evaluates only the others: same answer."""
    rng = np.random.RandomState(seed)
    u, K = 400, rng.randint(3, 8)
    E = _tied_energies(rng, u, K)
    r = rng.dirichlet(np.full(K, 3.0))
    s = rng.exponential(size=u) + 1e-2 if weighted else None
    T = rng.choice([1e-3, 1e-4])
    sorted_sizes = []
    rebase = _potts_beliefs._DualRows.rebase

    def spy(self, nu):
        rebase(self, nu)
        sorted_sizes.append(u if self.rows is None else self.rows.size)

    monkeypatch.setattr(_potts_beliefs._DualRows, "rebase", spy)
    P, nu = potts_p_step(E, T, r, weight=s)
    assert min(sorted_sizes) < u // 2, "no row was set aside: the test does not exercise the reduced path"
    monkeypatch.setattr(_potts_beliefs, "_COMMITTED_GAP", np.inf)  # every row free: the plain Newton
    P_plain, nu_plain = potts_p_step(E, T, r, weight=s)
    fractions = P.mean(axis=0) if s is None else s @ P / s.sum()
    assert np.abs(fractions - r).max() <= P_TOL
    np.testing.assert_allclose(P, P_plain, atol=1e-9)


def test_dual_rows_evaluate_the_fractions_of_all_rows():
    rng = np.random.RandomState(0)
    E = _tied_energies(rng, 500, 5)
    E -= E.min(axis=1, keepdims=True)
    T = 1e-3
    nu = rng.randn(5) * 0.01
    for weight in (None, rng.dirichlet(np.ones(500))):
        rows = _potts_beliefs._DualRows(E, T, weight)
        rows.rebase(nu)
        assert rows.rows is not None and rows.rows.size < 100
        for step in (0.0, 2e-3, -5e-3, 0.5):  # the last one moves past the margin: the rows are sorted again
            means, _, _ = rows.evaluate(nu + step)
            full = _potts_beliefs._softmax(nu + step, E, T)
            expected = full.mean(axis=0) if weight is None else weight @ full
            np.testing.assert_allclose(means, expected, rtol=0, atol=1e-15)


def _p_objective(P, E, T, s=None):
    """``sum_j s_j (sum_k p_jk e_jk + T sum_k p_jk log p_jk)``, unit ``s`` by default."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
    if s is None:
        return float((P * E).sum() + T * ent.sum())
    return float(s @ ((P * E).sum(axis=1) + T * ent.sum(axis=1)))


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("T", [2.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_p_step_matches_scipy_minimize_on_the_primal(seed, T, weighted):
    rng = np.random.RandomState(seed)
    u, K = 6, 3
    E = rng.randn(u, K)
    r = rng.dirichlet(np.full(K, 3.0))
    # Row weights scale a row's energy, entropy and share of the class fractions alike.
    s = rng.uniform(0.2, 3.0, size=u) if weighted else np.ones(u)
    a = s / s.sum()
    P, _ = potts_p_step(E, T, r, weight=s if weighted else None)

    def fun(x):
        Q = np.clip(x.reshape(u, K), 1e-300, None)
        return _p_objective(Q, E, T, s)

    def jac(x):
        Q = np.clip(x.reshape(u, K), 1e-300, None)
        return (s[:, None] * (E + T * (np.log(Q) + 1.0))).ravel()

    constraints = [
        {"type": "eq", "fun": lambda x: x.reshape(u, K).sum(axis=1) - 1.0},
        {"type": "eq", "fun": lambda x: (a @ x.reshape(u, K))[1:] - r[1:]},
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
    assert _p_objective(P, E, T, s) <= res.fun + 1e-9
    if weighted:  # the weights matter here: the unweighted solution is another one
        assert np.abs(potts_p_step(E, T, r)[0] - P).max() > 1e-3


def test_p_step_reduces_to_the_binary_logistic_for_two_classes():
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


def _brentq_newton(E, T, r, nu, max_newton, weight=None):
    """The p-step's Newton as it was with brentq as its line search: the reference of the test below."""
    u, K = E.shape
    rows = _potts_beliefs._DualRows(E, T, weight)
    means, P, a = rows.evaluate(nu)
    for _ in range(max_newton):
        grad = means - r
        if np.abs(grad).max() <= P_TOL:
            break
        if a is None:
            H = (np.diag(P.sum(axis=0)) - P.T @ P) / (u * T)
        else:
            H = (np.diag(a @ P) - (P * a[:, None]).T @ P) / T
        Hr = H[1:, 1:]
        ridge = 1e-13 * max(np.trace(Hr), np.finfo(float).tiny)
        d = np.zeros(K)
        try:
            d[1:] = -np.linalg.solve(Hr + ridge * np.eye(K - 1), grad[1:])
        except np.linalg.LinAlgError:
            d[1:] = -T * grad[1:]
        slope0 = grad @ d
        if not np.isfinite(slope0) or slope0 >= 0:
            d = np.zeros(K)
            d[1:] = -T * grad[1:]
        seen = {}

        def dphi(t, d=d, nu=nu, seen=seen):
            if t not in seen:
                seen[t] = float((rows.evaluate(nu + t * d)[0] - r) @ d)
            return seen[t]

        lo, hi = 0.0, 1.0
        s_hi = dphi(hi)
        while s_hi < 0 and hi < 1e30:
            lo, hi = hi, 2.0 * hi
            s_hi = dphi(hi)
        if s_hi <= 0:
            t = hi
        elif lo == 0.0 and dphi(0.0) >= 0:
            break
        else:
            t = brentq(dphi, lo, hi, xtol=1e-14 * hi, rtol=4 * np.finfo(float).eps, maxiter=200)
        nu = nu + t * d
        means, P, a = rows.evaluate(nu)
    P = _potts_beliefs._softmax(nu, E, T)
    grad = _potts_beliefs._column_means(P, weight) - r
    return P, nu, bool(np.abs(grad).max() <= P_TOL)


def _annealed_p_steps(E, T, r, s):
    """The p-steps of an annealing down to ``T``: a cold start above the energies' spread, then warm starts."""
    temps = [max(10.0 * np.ptp(E - E.min(axis=1, keepdims=True)), T)]
    while temps[-1] > T:
        temps.append(max(temps[-1] / 2.0, T))
    nu, out = None, []
    for temp in temps:
        P, nu = potts_p_step(E, temp, r, nu=nu, weight=s)
        out.append(P)
    return out


def test_p_step_line_search_gives_the_brentq_solution_with_half_the_evaluations(monkeypatch):
    """The safeguarded Newton line search against brentq's, on 32 random problems solved as the annealing does.

    Each problem (K in 2..6, 5 to 300 rows, energies spread over 0.01 to 100, a final temperature from 1e-4
    to 10, with or without weights) is a ladder of p-steps, warm-started from the one before, as in a fit.
    Every p-step meets the fractions, gives brentq's beliefs, and the dual is evaluated at most half as often.
    """
    evaluations = [0]
    evaluate = _potts_beliefs._DualRows.evaluate

    def counted(self, nu):
        evaluations[0] += 1
        return evaluate(self, nu)

    monkeypatch.setattr(_potts_beliefs._DualRows, "evaluate", counted)
    problems = []
    for seed in range(32):
        rng = np.random.RandomState(seed)
        K, u = rng.randint(2, 7), rng.randint(5, 301)
        E = rng.randn(u, K) * 10 ** rng.uniform(-2, 2)
        T = 10 ** rng.uniform(-4, 1)
        r = rng.dirichlet(np.full(K, 2.0))
        s = rng.exponential(size=u) + 1e-3 if seed % 2 else None
        problems.append((E, T, r, s))
    counts, beliefs = {}, {}
    for name in ("brentq", "newton"):
        with monkeypatch.context() as m:
            if name == "brentq":
                m.setattr(_potts_beliefs, "_newton", _brentq_newton)
            evaluations[0] = 0
            beliefs[name] = [_annealed_p_steps(*problem) for problem in problems]
            counts[name] = evaluations[0]
    n_steps = 0
    for (_, _, r, s), old, new in zip(problems, beliefs["brentq"], beliefs["newton"], strict=True):
        for P_old, P in zip(old, new, strict=True):
            fractions = P.mean(axis=0) if s is None else s @ P / s.sum()
            assert np.abs(fractions - r).max() <= P_TOL
            np.testing.assert_allclose(P, P_old, rtol=0, atol=1e-9)
            n_steps += 1
    assert n_steps > 300
    assert counts["newton"] <= 0.5 * counts["brentq"], counts


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
    from skssl.svm.solvers._da import entropy_bits, kl_bits

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
        callback=lambda e: (
            e.stage in ("init", "p", "w") and trace.append((e.stage, e.temperature, e.annealed_objective))
        ),
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
    svmlin = {"alpha": 1e-3, "positive_fraction": 0.5, "safeguard": None}  # SVMlin's -W 0.001 -R 0.5
    potts = PottsDeterministicAnnealingSVC(**svmlin).fit(X, y)
    binary = DeterministicAnnealingSVC(**svmlin).fit(X, y)
    assert potts.objective_ == pytest.approx(binary.objective_[0], rel=1e-9)
    # SVMlin's reference DA objective on pcmac (r = 0.5).
    assert potts.objective_ == pytest.approx(0.123867, abs=1e-6)
    np.testing.assert_allclose(potts.coef_, binary.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(potts.predict(data.X_test), binary.predict(data.X_test))
    np.testing.assert_array_equal(potts.transduction_, binary.transduction_)
    assert potts.n_iter_ == binary.n_iter_


@pytest.mark.parametrize("seed", fast_first(range(3)))
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
    # The same path: as many temperatures and w-steps as the binary DA.
    for res in (mirrored, both):
        assert (res.n_temperatures, res.n_w_steps) == (binary.n_temperatures, binary.n_w_steps)
    assert binary.n_w_steps > binary.n_temperatures >= 1
    # n_threads=2 solves the two classes at once, to the same model.
    threaded = potts_annealing(X, y_semi, labeled, symmetric_binary=False, n_threads=2, **kw)
    np.testing.assert_array_equal(threaded.W, both.W)


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
    clf = _fit(X, y_semi, positive_fraction=r, safeguard=None)  # the solver's distributions, before any refit
    np.testing.assert_allclose(clf.label_distributions_[y_semi == -1].mean(axis=0), r, atol=10 * P_TOL)


def test_caps_give_a_convergence_warning_and_n_iter_counts_temperatures():
    from sklearn.exceptions import ConvergenceWarning

    X, _, y_semi = _blobs(n_classes=3, seed=7)
    with pytest.warns(ConvergenceWarning, match="max_iter=2 temperatures"):
        clf = _fit(X, y_semi, max_iter=2)
    assert clf.n_iter_ == 2
    with pytest.warns(ConvergenceWarning, match="max_inner_iter=1"):
        _fit(X, y_semi, max_inner_iter=1)


# --- sample_weight and class_weight ---------------------------------------------------


def _sparse(seed=0, n=90, d=30, n_classes=3):
    rng = np.random.RandomState(seed)
    X = sp.random(n, d, density=0.25, format="csr", random_state=rng)
    X.data = rng.randn(X.nnz)
    y = (X @ rng.randn(d, n_classes)).argmax(axis=1)
    y_semi = np.where(rng.rand(n) < 0.3, y, -1)
    for k in range(n_classes):  # every class labeled at least twice
        y_semi[np.flatnonzero(y == k)[:2]] = k
    return X, y, y_semi


def _weights(seed, n, low=1, high=4):
    return np.random.RandomState(100 + seed).randint(low, high, size=n).astype(float)


# --- the weighted p-step (its fractions and the scipy check are with the unweighted ones above) ---


def test_weighted_p_step_equals_duplicated_rows_and_the_binary_rule():
    rng = np.random.RandomState(4)
    E = rng.randn(50, 4)
    r = np.array([0.1, 0.2, 0.3, 0.4])
    s = rng.randint(1, 4, size=50)
    P, _ = potts_p_step(E, 0.2, r, weight=s.astype(float))
    P_dup, _ = potts_p_step(np.repeat(E, s, axis=0), 0.2, r)
    np.testing.assert_allclose(np.repeat(P, s, axis=0), P_dup, atol=1e-9)
    # K = 2: the binary DA's weighted logistic rule.
    g = rng.randn(60) * 2
    w = rng.uniform(0.5, 2.0, size=60)
    P2, _ = potts_p_step(np.column_stack([-g / 2, g / 2]), 0.4, np.array([0.7, 0.3]), weight=w)
    np.testing.assert_allclose(P2[:, 1], optimize_p(g, 0.4, 0.3, w), atol=1e-9)


def test_weighted_p_step_rejects_bad_weights():
    E, r = np.zeros((3, 2)), np.array([0.5, 0.5])
    for bad in (np.array([1.0, 0.0, 1.0]), np.array([1.0, -1.0, 1.0]), np.ones(2), np.array([1.0, np.nan, 1.0])):
        with pytest.raises(ValueError, match="positive finite"):
            potts_p_step(E, 1.0, r, weight=bad)


def test_weighted_entropy_kl_and_objectives_are_weighted_means():
    rng = np.random.RandomState(2)
    P = rng.dirichlet(np.ones(3), size=8)
    Q = rng.dirichlet(np.ones(3), size=8)
    s = rng.randint(1, 4, size=8)
    sf = s.astype(float)
    assert potts_entropy_bits(P, sf) == pytest.approx(potts_entropy_bits(np.repeat(P, s, axis=0)), rel=1e-12)
    assert potts_kl_bits(P, Q, sf) == pytest.approx(potts_kl_bits(np.repeat(P, s, axis=0), np.repeat(Q, s, axis=0)))
    X, _, y_semi = _blobs(seed=3)
    labeled = y_semi != -1
    W, b = rng.randn(3, X.shape[1]) * 0.3, rng.randn(3) * 0.1
    Y = np.where(y_semi[:, None] == np.arange(3), 1.0, -1.0)
    sw = _weights(3, X.shape[0]).astype(int)
    Xd, Yd, ld = np.repeat(X, sw, axis=0), np.repeat(Y, sw, axis=0), np.repeat(labeled, sw)
    out, out_d = X @ W.T + b, Xd @ W.T + b
    F = potts_objective(W, b, out, Y, labeled, 1e-2, 1.0, sw.astype(float))
    assert F == pytest.approx(potts_objective(W, b, out_d, Yd, ld, 1e-2, 1.0), rel=1e-12)
    P_unl = rng.dirichlet(np.ones(3), size=int((~labeled).sum()))
    J = annealed_objective(W, b, out, Y, labeled, P_unl, 0.3, 1e-2, 1.0, sw.astype(float))
    J_d = annealed_objective(W, b, out_d, Yd, ld, np.repeat(P_unl, sw[~labeled], axis=0), 0.3, 1e-2, 1.0)
    assert J == pytest.approx(J_d, rel=1e-12)


# --- the annealing ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_two_classes_with_weights_equal_the_weighted_binary_da(seed):
    X, _, y_semi = _blobs(n_classes=2, seed=seed, n_per_class=15)
    labeled = y_semi != -1
    sw = np.random.RandomState(seed).uniform(0.2, 3.0, size=X.shape[0])
    kw = dict(alpha=1e-2, unlabeled_weight=1.0)
    binary = deterministic_annealing(
        X, np.where(y_semi == 1, 1.0, -1.0), labeled, positive_fraction=0.5, sample_weight=sw, **kw
    )
    for symmetric in (True, False):
        res = potts_annealing(
            X, y_semi, labeled, class_fractions=np.array([0.5, 0.5]), symmetric_binary=symmetric, sample_weight=sw, **kw
        )
        # With symmetric_binary=False the two sides' beliefs differ by rounding (softmax against expit), and
        # along ~160 annealing steps CGLS's relative stopping rule turns that into up to a few 1e-9 of the
        # objective: on seed 1, perturbing X by one ulp moves the binary DA's own objective by 2.4e-9. So 1e-8
        # here, the weights and beliefs as tight as before.
        assert res.objective == pytest.approx(binary.objective, rel=1e-9 if symmetric else 1e-8)
        np.testing.assert_allclose(res.W[1], binary.w, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(res.P[:, 1], binary.p, atol=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_two_classes_estimator_with_weights_equals_the_binary_estimator(seed):
    X, _, y_semi = _sparse(seed, n_classes=2)
    sw = _weights(seed, X.shape[0], low=0, high=4)  # zeros included
    sw[np.flatnonzero(y_semi != -1)[:2]] = 1.0
    kw = dict(alpha=1e-2, class_weight={0: 1.0, 1: 2.5})
    potts = PottsDeterministicAnnealingSVC(**kw).fit(X, y_semi, sample_weight=sw)
    binary = DeterministicAnnealingSVC(**kw).fit(X, y_semi, sample_weight=sw)
    # K = 2 runs the binary DA's own belief update, so the two fits agree as tightly as the unweighted ones.
    assert potts.objective_ == pytest.approx(binary.objective_[0], rel=1e-9)
    np.testing.assert_allclose(potts.coef_, binary.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(potts.predict(X), binary.predict(X))
    # Potts' transduction_ is the argmax of the final distribution, the binary DA's the model's sign: they
    # agree wherever the distribution has committed (the split row can fall either way).
    committed = potts.label_distributions_.max(axis=1) > 1 - 1e-6
    assert committed.sum() >= X.shape[0] - 1
    np.testing.assert_array_equal(potts.transduction_[committed], binary.transduction_[committed])


@pytest.mark.parametrize("seed", range(3))
def test_weighted_objective_never_increases_within_a_temperature(seed):
    X, _, y_semi = _blobs(seed=seed, n_classes=4)
    trace = []
    potts_annealing(
        X,
        y_semi,
        y_semi != -1,
        alpha=1e-2,
        unlabeled_weight=1.0,
        class_fractions=np.full(4, 0.25),
        sample_weight=np.random.RandomState(seed).uniform(0.1, 5.0, size=X.shape[0]),
        callback=lambda e: e.stage in ("init", "p", "w") and trace.append((e.temperature, e.annealed_objective)),
    )
    n_checked = 0
    for (T0, J0), (T1, J1) in zip(trace, trace[1:]):
        if T0 == T1:
            assert J1 <= J0 + 1e-10 * abs(J0)
            n_checked += 1
    assert n_checked > 5


# --- the estimator -------------------------------------------------------------------


@pytest.mark.parametrize("seed", fast_first(range(3)))
@pytest.mark.parametrize("data", ["blobs4", "sparse3"])
def test_integer_weights_equal_duplicated_rows(seed, data):
    # The annealing alone: the safeguard's TSVM candidate moves rows, not weights (skssl.svm.safeguard._safeguard).
    X, _, y_semi = _blobs(n_classes=4, seed=seed) if data == "blobs4" else _sparse(seed)
    sw = _weights(seed, X.shape[0])
    repeats = sw.astype(int)
    weighted = PottsDeterministicAnnealingSVC(alpha=1e-2, safeguard=None).fit(X, y_semi, sample_weight=sw)
    X_dup = X[np.repeat(np.arange(X.shape[0]), repeats)]
    duplicated = PottsDeterministicAnnealingSVC(alpha=1e-2, safeguard=None).fit(X_dup, np.repeat(y_semi, repeats))
    assert weighted.objective_ == pytest.approx(duplicated.objective_, rel=1e-7)
    np.testing.assert_allclose(weighted.coef_, duplicated.coef_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(weighted.intercept_, duplicated.intercept_, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(weighted.predict(X), duplicated.predict(X))
    np.testing.assert_allclose(
        np.repeat(weighted.label_distributions_, repeats, axis=0), duplicated.label_distributions_, atol=1e-5
    )


@pytest.mark.parametrize("data", fast_first(["blobs4", "sparse3"]))
def test_zero_weight_removes_the_row(data):
    X, _, y_semi = _blobs(n_classes=4, seed=1) if data == "blobs4" else _sparse(1)
    unl = np.flatnonzero(y_semi == -1)
    lab = np.flatnonzero(y_semi != -1)
    drop = np.concatenate([unl[[0, 3, 7]], lab[-1:]])
    sw = np.ones(X.shape[0])
    sw[drop] = 0.0
    keep = np.setdiff1d(np.arange(X.shape[0]), drop)
    a = PottsDeterministicAnnealingSVC(alpha=1e-2).fit(X, y_semi, sample_weight=sw)
    b = PottsDeterministicAnnealingSVC(alpha=1e-2).fit(X[keep], y_semi[keep])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.objective_ == b.objective_
    np.testing.assert_array_equal(a.label_distributions_[keep], b.label_distributions_)
    np.testing.assert_array_equal(a.transduction_[keep], b.transduction_)
    # A dropped unlabeled row gets the model's prediction, one-hot.
    dropped_unl = drop[:3]
    np.testing.assert_array_equal(a.transduction_[dropped_unl], a.predict(X[dropped_unl]))
    np.testing.assert_array_equal(a.label_distributions_[dropped_unl].max(axis=1), 1.0)
    assert a.transduction_[drop[3]] == y_semi[drop[3]]


@pytest.mark.parametrize("data", ["blobs4", "sparse3", "blobs2"])
def test_unit_weights_are_no_weights_bitwise(data):
    if data == "sparse3":
        X, _, y_semi = _sparse(2)
    else:
        X, _, y_semi = _blobs(n_classes=int(data[-1]), seed=2)
    a = PottsDeterministicAnnealingSVC(alpha=1e-2).fit(X, y_semi, sample_weight=np.ones(X.shape[0]))
    b = PottsDeterministicAnnealingSVC(alpha=1e-2).fit(X, y_semi)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.label_distributions_, b.label_distributions_)
    assert a.objective_ == b.objective_


def test_weights_change_the_model_and_the_estimated_fractions(monkeypatch):
    # The labels' estimate: these blobs cluster by class, so the clusters' shares
    # (skssl.svm.defaults._cluster_fractions, tested on its own) would replace the 3:1:1 that the weights give.
    monkeypatch.setattr(svm_base, "fractions_from_clusters", lambda X, y, mask, fractions, weights, **kw: fractions)
    X, _, y_semi = _blobs(n_classes=3, seed=7)
    lab = y_semi != -1
    sw = np.where(lab & (y_semi == 0), 3.0, 1.0)
    clf = PottsDeterministicAnnealingSVC(alpha=1e-2, safeguard=None).fit(X, y_semi, sample_weight=sw)
    # The estimated fractions are the weighted class fractions of the labeled rows: 3:1:1.
    unl = ~lab
    np.testing.assert_allclose(clf.label_distributions_[unl].mean(axis=0), [0.6, 0.2, 0.2], atol=1e-10)
    assert not np.allclose(clf.coef_, PottsDeterministicAnnealingSVC(alpha=1e-2).fit(X, y_semi).coef_)


def test_class_weight_multiplies_the_labeled_rows():
    X, _, y_semi = _sparse(5)
    lab = y_semi != -1
    # The safeguard's candidates spread the fractions by the labeled rows' sample weights, which class weights
    # do not enter (as for the estimated fractions), so the equivalence is the solver's: safeguard off.
    kw = {"alpha": 1e-2, "positive_fraction": [0.3, 0.3, 0.4], "safeguard": None}
    a = PottsDeterministicAnnealingSVC(class_weight={0: 1.0, 1: 3.0, 2: 0.5}, **kw).fit(X, y_semi)
    factor = np.array([1.0, 3.0, 0.5])[np.maximum(y_semi, 0)]
    b = PottsDeterministicAnnealingSVC(**kw).fit(X, y_semi, sample_weight=np.where(lab, factor, 1.0))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    counts = np.bincount(y_semi[lab])
    balanced = lab.sum() / (3 * counts)
    c = PottsDeterministicAnnealingSVC(class_weight="balanced", **kw).fit(X, y_semi)
    d = PottsDeterministicAnnealingSVC(**kw).fit(
        X, y_semi, sample_weight=np.where(lab, balanced[np.maximum(y_semi, 0)], 1.0)
    )
    np.testing.assert_array_equal(c.coef_, d.coef_)
    assert not np.allclose(a.coef_, PottsDeterministicAnnealingSVC(**kw).fit(X, y_semi).coef_)
    # Without given fractions, class_weight does not change the estimate (as in the binary DA).
    e = PottsDeterministicAnnealingSVC(alpha=1e-2, class_weight="balanced", safeguard=None).fit(X, y_semi)
    np.testing.assert_allclose(
        e.label_distributions_[~lab].mean(axis=0), np.bincount(y_semi[lab]) / lab.sum(), atol=1e-10
    )


def test_sample_weight_is_validated_and_not_modified():
    X, _, y_semi = _blobs(n_classes=3, seed=8)
    sw = np.linspace(0.5, 2.0, X.shape[0])
    copy = sw.copy()
    PottsDeterministicAnnealingSVC(alpha=1e-2, class_weight="balanced").fit(X, y_semi, sample_weight=sw)
    np.testing.assert_array_equal(sw, copy)
    with pytest.raises(ValueError, match="(?i)negative"):
        PottsDeterministicAnnealingSVC().fit(X, y_semi, sample_weight=-sw)
    with pytest.raises(ValueError, match="every labeled row"):
        PottsDeterministicAnnealingSVC().fit(X, y_semi, sample_weight=np.where(y_semi == -1, 1.0, 0.0))
    with pytest.raises(ValueError, match="(?i)sample_weight"):
        PottsDeterministicAnnealingSVC().fit(X, y_semi, sample_weight=np.ones(3))

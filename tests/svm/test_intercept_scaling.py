"""intercept_scaling: the regularization of the bias, alpha / intercept_scaling**2, and its "auto" value."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.svm import LinearSVC

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.kernels._kernels import csr_cgls, dense_cgls
from skssl.svm.solvers._mfn import l2_svm_mfn, mfn_objective
from skssl.svm.solvers._problem import S3VMProblem
from skssl.svm.defaults._regularization import AUTO_INTERCEPT_FACTOR, auto_alpha
from skssl.svm.defaults._penalty_check import PENALTY_FACTORS

from .._tiers import fast_first

ALL = [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]
SEMI_SUPERVISED = [TransductiveSVC, DeterministicAnnealingSVC]


def _problem(seed, n=80, d=5, imbalance=0.8, sparse=False, n_classes=2, centred=False):
    """Rows whose classes are unbalanced, far from the origin or (``centred``) standardized: the bias matters."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d) + rng.normal(0.0, 2.0, size=d)
    score = X[:, 0] - np.quantile(X[:, 0], imbalance) + 0.3 * rng.normal(size=n)
    y = (score > 0).astype(np.int64)
    if n_classes == 3:
        y = y + (X[:, 1] > np.quantile(X[:, 1], 0.7)).astype(np.int64) * (y == 0) * 2
    y_semi = np.where(rng.random(n) < 0.35, y, -1)
    y_semi[:n_classes] = np.arange(n_classes)
    if centred:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    return (sp.csr_matrix(X) if sparse else X), y_semi


@pytest.mark.parametrize("seed", range(30))
def test_cgls_solves_the_system_with_the_bias_regularized_apart(seed):
    # (D + A' C A) [w; b] = A' C t with D = diag(alpha, ..., alpha, alpha_b), A = [X, 1]: checked against a dense
    # solve of the normal equations, on CSR and dense rows and any number of blocks.
    rng = np.random.default_rng(seed)
    n, d = rng.integers(5, 60), rng.integers(1, 12)
    X = sp.random(n, d, density=rng.uniform(0.2, 1.0), format="csr", random_state=seed) * rng.uniform(0.1, 10)
    cost = rng.uniform(0.0, 1.0, n) * (rng.random(n) < 0.9)
    target = np.sign(rng.normal(size=n))
    alpha = 10.0 ** rng.uniform(-4, 0)
    alpha_b = alpha * 10.0 ** rng.uniform(-6, 2)
    A = np.hstack([X.toarray(), np.ones((n, 1))])
    D = np.diag(np.append(np.full(d, alpha), alpha_b))
    exact = np.linalg.solve(D + A.T @ (cost[:, None] * A), A.T @ (cost * target))
    bounds = np.unique(np.linspace(0, n, rng.integers(2, 5)).astype(np.intp))
    for solve in ("csr", "dense"):
        w, out = np.zeros(d), np.zeros(n)
        if solve == "csr":
            b, ok, _ = csr_cgls(X.data, X.indices, X.indptr, bounds, cost, target, out, w, 0.0, alpha, alpha_b,
                                1e-13, 10000, 2)  # fmt: skip
        else:
            rows = np.arange(n, dtype=np.intp)
            b, ok, _ = dense_cgls(X.toarray(), rows, bounds, cost, target, out, w, 0.0, alpha, alpha_b, 1e-13, 10000, 2)
        scale = max(1.0, np.abs(exact).max())
        np.testing.assert_allclose(np.append(w, b), exact, rtol=1e-6, atol=1e-7 * scale)
        np.testing.assert_allclose(out, X @ w + b, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(out).max()))


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_cgls_refuses_a_bias_regularization_that_is_not_positive_and_finite(bad):
    X = sp.random(6, 3, density=0.5, format="csr", random_state=0)
    bounds = np.array([0, 6], dtype=np.intp)
    with pytest.raises(ValueError, match="alpha_b must be positive and finite"):
        csr_cgls(X.data, X.indices, X.indptr, bounds, np.ones(6), np.ones(6), np.zeros(6), np.zeros(3), 0.0, 1.0, bad,
                 1e-6, 10, 1)  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_mfn_reaches_scipys_minimum_with_the_bias_regularized_apart(seed):
    rng = np.random.default_rng(seed)
    X, y_semi = _problem(seed, n=40, d=3)
    lab = y_semi != -1
    y = np.where(y_semi[lab] == 1, 1.0, -1.0)
    cost = np.full(lab.sum(), 1.0 / lab.sum())
    alpha, alpha_b = 10.0 ** rng.uniform(-3, -1), 10.0 ** rng.uniform(-7, -1)
    res = l2_svm_mfn(X[lab], y, cost, alpha=alpha, alpha_b=alpha_b, rel_tol=1e-14)

    def objective(v):
        return mfn_objective(v[:-1], v[-1], X[lab] @ v[:-1] + v[-1], y, cost, alpha, alpha_b=alpha_b)

    ref = minimize(objective, np.zeros(X.shape[1] + 1), method="BFGS", options={"gtol": 1e-12})
    assert res.objective <= ref.fun + 1e-10
    assert res.objective == pytest.approx(objective(np.append(res.w, res.b)), rel=1e-12)
    np.testing.assert_allclose(np.append(res.w, res.b), ref.x, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scaling", [1.0, 3.0, 30.0])
def test_linear_l2svc_is_sklearns_linearsvc_at_the_same_intercept_scaling(seed, scaling):
    # An independent solver of the same model: LinearSVC(C, squared hinge, intercept_scaling) is the objective at
    # alpha = 1 / (2 C l) with the bias's penalty alpha / intercept_scaling**2.
    X, y_semi = _problem(seed)
    lab = y_semi != -1
    alpha = 0.02
    ours = LinearL2SVC(alpha=alpha, intercept_scaling=scaling, tol=1e-14).fit(X, y_semi)
    ref = LinearSVC(C=1.0 / (2 * alpha * lab.sum()), intercept_scaling=scaling, dual=False, tol=1e-12, max_iter=100000)
    ref.fit(X[lab], y_semi[lab])
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("sparse", [False, True])
def test_auto_is_one_for_a_given_alpha_and_ten_root_mean_squared_norms_for_auto_alpha_on_centred_rows(Est, sparse):
    n_classes = 3 if Est is PottsDeterministicAnnealingSVC else 2
    X, y_semi = _problem(1, sparse=sparse, n_classes=n_classes, centred=True)
    extra = {} if Est is LinearL2SVC else {"safeguard": None}
    # A given alpha: SVMlin's objective, the bias regularized like a weight, the same model as intercept_scaling=1.
    given = Est(alpha=0.05, **extra).fit(X, y_semi)
    assert given.intercept_scaling_ == 1.0
    svmlin = Est(alpha=0.05, intercept_scaling=1.0, **extra).fit(X, y_semi)
    np.testing.assert_array_equal(given.coef_, svmlin.coef_)
    np.testing.assert_array_equal(given.intercept_, svmlin.intercept_)
    # alpha="auto": on centred rows AUTO_INTERCEPT_FACTOR times the root mean squared norm of the rows alpha's mean
    # runs over (LinearL2SVC's labeled rows need not be centred: then 1).
    auto = Est(**extra).fit(X, y_semi)
    rows = (y_semi != -1) if Est is LinearL2SVC else slice(None)
    dense = X.toarray() if sparse else X
    mean_row = dense[rows].mean(axis=0)
    mean_norm = np.mean(np.sum(dense[rows] ** 2, axis=1))
    n_rows = dense[rows].shape[0]
    if mean_row @ mean_row <= (0.01 + 1.0 / n_rows) * mean_norm:
        assert auto.intercept_scaling_ == pytest.approx(AUTO_INTERCEPT_FACTOR * np.sqrt(mean_norm), rel=1e-12)
    else:
        assert auto.intercept_scaling_ == 1.0
    assert Est is LinearL2SVC or auto.intercept_scaling_ > 1.0
    # The rule's value, or a tenth or a hundredth of it where the labeled rows call for less (_penalty_check).
    rule = auto_alpha(X, y_semi != -1, unlabeled_weight=0.0 if Est is LinearL2SVC else 1.0)
    assert min(abs(auto.alpha_ / rule - factor) for factor in PENALTY_FACTORS) < 1e-12


@pytest.mark.parametrize("Est", ALL)
def test_the_auto_model_does_not_depend_on_the_scale_of_x(Est):
    # alpha_ grows with c**2 and intercept_scaling_ with c (centred rows): scaling X by c divides the weights by c
    # and leaves the bias and every prediction as they were.
    n_classes = 3 if Est is PottsDeterministicAnnealingSVC else 2
    X, y_semi = _problem(2, n_classes=n_classes, centred=True)
    extra = {} if Est is LinearL2SVC else {"safeguard": None}
    a = Est(**extra).fit(X, y_semi)
    b = Est(**extra).fit(100.0 * X, y_semi)
    assert b.intercept_scaling_ == pytest.approx(100.0 * a.intercept_scaling_, rel=1e-12)
    np.testing.assert_allclose(b.decision_function(100.0 * X), a.decision_function(X), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("Est", SEMI_SUPERVISED)
def test_the_reported_objective_regularizes_the_bias_at_alpha_over_scaling_squared(Est):
    X, y_semi = _problem(3)
    clf = Est(alpha=0.03, intercept_scaling=4.0, safeguard=None).fit(X, y_semi)
    outputs = clf.decision_function(X)
    t = np.where(y_semi == 1, 1.0, -1.0)
    problem = S3VMProblem(t, y_semi != -1, alpha=0.03, alpha_b=0.03 / 16.0, unlabeled_weight=1.0)
    assert clf.objective_[0] == pytest.approx(problem.objective(clf.coef_[0], clf.intercept_[0], outputs), rel=1e-9)
    svmlin = S3VMProblem(t, y_semi != -1, alpha=0.03, unlabeled_weight=1.0)
    assert problem.objective(clf.coef_[0], 1.0, outputs) < svmlin.objective(clf.coef_[0], 1.0, outputs)


def test_a_lighter_bias_penalty_fits_an_unbalanced_problem_better():
    # Standardized rows with 80% of them in one class: the bias regularized like a weight is pulled to 0; the
    # "auto" scaling lets it take the value the data need (the labeled rows' hinge loss falls).
    X, y_semi = _problem(4, imbalance=0.8, centred=True)
    lab = y_semi != -1
    svmlin = LinearL2SVC(intercept_scaling=1.0).fit(X, y_semi)
    auto = LinearL2SVC().fit(X, y_semi)
    assert auto.alpha_ == svmlin.alpha_ and auto.intercept_scaling_ > 1.0

    def labeled_loss(clf):
        margin = np.where(y_semi[lab] == 1, 1.0, -1.0) * clf.decision_function(X[lab])
        return np.mean(np.maximum(0.0, 1.0 - margin) ** 2)

    assert labeled_loss(auto) < labeled_loss(svmlin)


@pytest.mark.parametrize("bad", [0, -2.0, "big"])
def test_a_bad_intercept_scaling_is_refused_by_name(bad):
    X, y_semi = _problem(5)
    with pytest.raises(ValueError, match="intercept_scaling"):
        TransductiveSVC(intercept_scaling=bad).fit(X, y_semi)


@pytest.mark.parametrize("seed", fast_first(range(10), 3))
@pytest.mark.parametrize("sparse", [False, True])
def test_auto_keeps_svmlins_penalty_on_rows_whose_mean_is_off_the_origin(seed, sparse):
    # Counts, tf-idf and pixels: the origin means "no evidence" and SVMlin's penalty on the score there is kept.
    rng = np.random.default_rng(seed)
    X = rng.random((60, 8)) * (rng.random((60, 8)) < 0.5)  # non-negative, like tf-idf or pixels
    y_semi = np.where(rng.random(60) < 0.3, (X[:, 0] > 0.2).astype(int), -1)
    y_semi[:2] = [0, 1]
    X = sp.csr_matrix(X) if sparse else X
    # intercept_scaling_ is set from the rows before any solve: the safeguard's fits have no say in it.
    for est in (LinearL2SVC(), TransductiveSVC(safeguard=None)):
        assert est.fit(X, y_semi).intercept_scaling_ == 1.0
    # The same rows centred: the bias is freed.
    dense = X.toarray() if sparse else X
    assert TransductiveSVC(safeguard=None).fit(dense - dense.mean(axis=0), y_semi).intercept_scaling_ > 1.0

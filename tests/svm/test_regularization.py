"""alpha="auto": the data-aware regularization of the linear estimators."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.defaults._regularization import auto_alpha, resolve_regularization

ALL = [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]


def _problem(seed, n=60, d=7, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10.0, size=d) * (rng.random((n, d)) < 0.6)
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(np.int64)
    y_semi = np.where(rng.random(n) < 0.3, y, -1)
    y_semi[:2] = [0, 1]
    return (sp.csr_matrix(X) if sparse else X), y_semi


@pytest.mark.parametrize("seed", range(20))
def test_auto_alpha_is_the_mean_squared_norm_times_the_cost_per_counted_row(seed):
    X, y_semi = _problem(seed)
    labeled = y_semi != -1
    l, u = labeled.sum(), (~labeled).sum()
    w_u = np.random.default_rng(seed).uniform(0.1, 3.0)
    expected = np.mean(np.sum(X**2, axis=1)) * (1 + w_u) / (l + w_u * u)
    assert auto_alpha(X, labeled, unlabeled_weight=w_u) == pytest.approx(expected, rel=1e-12)
    assert auto_alpha(sp.csr_matrix(X), labeled, unlabeled_weight=w_u) == pytest.approx(expected, rel=1e-12)
    # The supervised value: the labeled rows' own scale over their number.
    supervised = np.mean(np.sum(X[labeled] ** 2, axis=1)) / l
    assert auto_alpha(X, labeled, unlabeled_weight=0.0) == pytest.approx(supervised, rel=1e-12)
    assert auto_alpha(sp.csr_matrix(X), labeled, unlabeled_weight=0.0) == pytest.approx(supervised, rel=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_auto_alpha_shrinks_as_unlabeled_rows_are_added(seed):
    # More rows of the same scale pin the separator down: alpha_ falls with every unlabeled row added,
    # and with one labeled row in ten it is a fifth of the supervised value at the same scale.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 5))
    labeled = np.zeros(200, dtype=bool)
    labeled[:20] = True
    values = [auto_alpha(X[:n], labeled[:n]) for n in (20, 50, 100, 200)]
    assert all(a > b for a, b in zip(values, values[1:]))
    mean_norm = np.mean(np.sum(X**2, axis=1))
    assert values[-1] == pytest.approx(0.2 * mean_norm / 20, rel=1e-12)
    assert values[0] == pytest.approx(np.mean(np.sum(X[:20] ** 2, axis=1)) / 20, rel=1e-12)  # no unlabeled row


@pytest.mark.parametrize("seed", range(20))
def test_auto_alpha_counts_a_weight_of_two_as_the_row_twice(seed):
    X, y_semi = _problem(seed)
    rng = np.random.default_rng(seed)
    twice = rng.choice(X.shape[0], 5, replace=False)
    weights = np.ones(X.shape[0])
    weights[twice] = 2.0
    duplicated = np.vstack([X, X[twice]])
    labeled = y_semi != -1
    for w_u in (0.0, 0.5, 1.0):
        assert auto_alpha(X, labeled, weights, unlabeled_weight=w_u) == pytest.approx(
            auto_alpha(duplicated, np.concatenate([labeled, labeled[twice]]), unlabeled_weight=w_u), rel=1e-12
        )


def test_auto_alpha_of_all_zero_rows_uses_the_bias_scale():
    labeled = np.array([True, True, False, False])
    # Mean squared norm taken as 1; (1 + 1) / (2 + 2) with unlabeled_weight=1.
    assert auto_alpha(np.zeros((4, 3)), labeled) == pytest.approx(0.5)
    assert auto_alpha(sp.csr_matrix((4, 3)), labeled) == pytest.approx(0.5)


def test_a_given_alpha_is_used_as_it_is():
    X, y_semi = _problem(0)
    # With SVMlin's penalty on the bias: intercept_scaling "auto" is 1 for a given alpha.
    assert resolve_regularization(0.25, "auto", X, y_semi != -1) == (0.25, 1.0)
    assert resolve_regularization(1, 3, X, y_semi != -1) == (1.0, 3.0)


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("sparse", [False, True])
def test_estimators_store_the_alpha_they_used(Est, sparse):
    X, y_semi = _problem(1, sparse=sparse)
    extra = {} if Est is LinearL2SVC else {"safeguard": None}
    auto = Est(**extra).fit(X, y_semi)
    assert auto.alpha == "auto"
    expected = auto_alpha(X, y_semi != -1, unlabeled_weight=0.0 if Est is LinearL2SVC else 1.0)
    assert auto.alpha_ == pytest.approx(expected, rel=1e-12)
    # The same model from the values used, given explicitly (a given alpha alone would be SVMlin's
    # objective, with intercept_scaling_ = 1).
    given = Est(alpha=auto.alpha_, intercept_scaling=auto.intercept_scaling_, **extra).fit(X, y_semi)
    assert given.alpha_ == auto.alpha_
    assert given.intercept_scaling_ == auto.intercept_scaling_
    np.testing.assert_array_equal(given.coef_, auto.coef_)
    np.testing.assert_array_equal(given.intercept_, auto.intercept_)


def test_auto_alpha_follows_the_scale_of_the_data():
    # Scaling X by c scales alpha_ by c**2: the penalty keeps its weight against the data term.
    X, y_semi = _problem(2)
    a = LinearL2SVC().fit(X, y_semi).alpha_
    b = LinearL2SVC().fit(10.0 * X, y_semi).alpha_
    assert b == pytest.approx(100.0 * a, rel=1e-12)


def test_auto_alpha_ignores_class_weight_and_zero_weight_rows():
    X, y_semi = _problem(3)
    base = TransductiveSVC(safeguard=None).fit(X, y_semi).alpha_
    assert TransductiveSVC(safeguard=None, class_weight="balanced").fit(X, y_semi).alpha_ == pytest.approx(
        base, rel=1e-12
    )
    weights = np.ones(X.shape[0])
    weights[-5:] = 0.0
    dropped = TransductiveSVC(safeguard=None).fit(X[:-5], y_semi[:-5]).alpha_
    assert TransductiveSVC(safeguard=None).fit(X, y_semi, sample_weight=weights).alpha_ == pytest.approx(
        dropped, rel=1e-12
    )


def test_an_unknown_string_is_refused():
    X, y_semi = _problem(4)
    with pytest.raises(ValueError, match="alpha"):
        TransductiveSVC(alpha="scale").fit(X, y_semi)


def test_the_supervised_estimator_takes_the_scale_of_its_labeled_rows_only():
    # LinearL2SVC ignores the unlabeled rows, so they must not move its alpha_ either.
    X, y_semi = _problem(5)
    labeled = y_semi != -1
    far = X.copy()
    far[~labeled] *= 100.0
    assert LinearL2SVC().fit(far, y_semi).alpha_ == LinearL2SVC().fit(X, y_semi).alpha_
    semi = TransductiveSVC(safeguard=None)
    assert clone(semi).fit(far, y_semi).alpha_ > clone(semi).fit(X, y_semi).alpha_


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC])
def test_auto_alpha_counts_the_unlabeled_rows_at_the_estimators_unlabeled_weight(Est):
    X, y_semi = _problem(5)
    fitted = Est(unlabeled_weight=0.4, safeguard=None).fit(X, y_semi)
    assert fitted.alpha_ == pytest.approx(auto_alpha(X, y_semi != -1, unlabeled_weight=0.4), rel=1e-12)
    assert fitted.alpha_ != pytest.approx(auto_alpha(X, y_semi != -1), rel=1e-6)

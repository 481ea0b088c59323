"""alpha="auto": the data-aware regularization of the linear estimators."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm._regularization import AUTO_ALPHA_FACTOR, auto_alpha, resolve_alpha

ALL = [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]


def _problem(seed, n=60, d=7, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10.0, size=d) * (rng.random((n, d)) < 0.6)
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(np.int64)
    y_semi = np.where(rng.random(n) < 0.3, y, -1)
    y_semi[:2] = [0, 1]
    return (sp.csr_matrix(X) if sparse else X), y_semi


@pytest.mark.parametrize("seed", range(20))
def test_auto_alpha_is_the_factor_times_the_mean_squared_norm_over_the_labeled_count(seed):
    X, y_semi = _problem(seed)
    labeled = y_semi != -1
    expected = AUTO_ALPHA_FACTOR * np.mean(np.sum(X**2, axis=1)) / labeled.sum()
    assert auto_alpha(X, labeled) == pytest.approx(expected, rel=1e-12)
    assert auto_alpha(sp.csr_matrix(X), labeled) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_auto_alpha_counts_a_weight_of_two_as_the_row_twice(seed):
    X, y_semi = _problem(seed)
    rng = np.random.default_rng(seed)
    twice = rng.choice(X.shape[0], 5, replace=False)
    weights = np.ones(X.shape[0])
    weights[twice] = 2.0
    duplicated = np.vstack([X, X[twice]])
    labeled = y_semi != -1
    assert auto_alpha(X, labeled, weights) == pytest.approx(
        auto_alpha(duplicated, np.concatenate([labeled, labeled[twice]])), rel=1e-12
    )


def test_auto_alpha_of_all_zero_rows_uses_the_bias_scale():
    labeled = np.array([True, True, False, False])
    assert auto_alpha(np.zeros((4, 3)), labeled) == pytest.approx(AUTO_ALPHA_FACTOR / 2)
    assert auto_alpha(sp.csr_matrix((4, 3)), labeled) == pytest.approx(AUTO_ALPHA_FACTOR / 2)


def test_a_given_alpha_is_used_as_it_is():
    X, y_semi = _problem(0)
    assert resolve_alpha(0.25, X, y_semi != -1) == 0.25
    assert resolve_alpha(1, X, y_semi != -1) == 1.0


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("sparse", [False, True])
def test_estimators_store_the_alpha_they_used(Est, sparse):
    X, y_semi = _problem(1, sparse=sparse)
    extra = {} if Est is LinearL2SVC else {"safeguard": None}
    auto = Est(**extra).fit(X, y_semi)
    assert auto.alpha == "auto"
    expected = auto_alpha(X, y_semi != -1, unlabeled_rows=Est is not LinearL2SVC)
    assert auto.alpha_ == pytest.approx(expected, rel=1e-12)
    given = Est(alpha=auto.alpha_, **extra).fit(X, y_semi)
    assert given.alpha_ == auto.alpha_
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

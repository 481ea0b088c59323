"""Fits started by another fit skip the validation of rows it validated, and give the public fit's model.

The safeguard's candidates and folds, alpha's check and the supervised refits run through ``_fit_for_parent``
and ``_predict_validated``; over many random problems they must give exactly what ``fit`` and ``predict`` give.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, TransductiveSVC
from skssl.svm.defaults._handed_down import HandedDown

from .._tiers import fast_first


def _problem(seed):
    """Rows of a random kind (dense or CSR), class indices with -1, sometimes weights or a class left out."""
    rng = np.random.RandomState(seed)
    n, d = rng.randint(30, 120), rng.randint(2, 15)
    n_classes = rng.choice([2, 3])
    y = rng.randint(0, n_classes, n)
    X = rng.randn(n, d) + 1.5 * y[:, None] * (rng.rand(d) > 0.5)
    if seed % 3 == 0:
        X[rng.rand(n, d) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    y_semi = np.where(rng.rand(n) < 0.4, y, -1)
    for k in range(n_classes):  # every class labeled at least twice
        y_semi[np.flatnonzero(y == k)[:2]] = k
    if n_classes == 3 and seed % 4 == 1:
        y_semi[y_semi == 1] = -1  # class indices 0 and 2: a class absent from the labels, as in a fold
        y_semi[np.flatnonzero(y == 1)] = -1
    weights = rng.uniform(0.5, 2.0, n) if seed % 2 else None
    return X, y_semi.astype(np.int64), weights


def _assert_same_model(a, b):
    for name in ("coef_", "intercept_", "classes_", "transduction_", "alpha_", "intercept_scaling_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.n_features_in_ == b.n_features_in_


@pytest.mark.parametrize("seed", fast_first(range(40), 8))
def test_supervised_fit_on_validated_rows_is_the_public_fit(seed):
    X, y, weights = _problem(seed)
    labeled = y != -1
    w = None if weights is None else weights[labeled]
    params = dict(alpha=0.05 * (1 + seed % 3), intercept_scaling=1.0 + seed % 2)
    public = LinearL2SVC(**params).fit(X[labeled], y[labeled], sample_weight=w)
    fast = LinearL2SVC(**params)._fit_for_parent(X[labeled], y[labeled], w)
    _assert_same_model(public, fast)
    np.testing.assert_array_equal(fast._predict_validated(X), public.predict(X))


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC])
@pytest.mark.parametrize("seed", fast_first(range(12), 3))
def test_semi_supervised_fit_on_validated_rows_is_the_public_fit(Est, seed):
    X, y, weights = _problem(seed)
    public = Est(max_iter=50).fit(X, y, sample_weight=weights)
    fast = Est(max_iter=50)._fit_for_parent(X, y, weights, HandedDown())
    _assert_same_model(public, fast)
    np.testing.assert_array_equal(fast._predict_validated(X), public.predict(X))


def test_validated_rows_with_one_labeled_class_still_get_the_public_error():
    X, y, _ = _problem(1)
    y = np.where(y == 0, 0, -1)
    with pytest.raises(ValueError, match="only one class"):
        LinearL2SVC()._fit_for_parent(X, y, None)

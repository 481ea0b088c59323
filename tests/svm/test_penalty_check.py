"""The labeled rows' check of alpha="auto" (skssl.svm.defaults._penalty_check)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import StandardScaler

from skssl.svm import _base as svm_base
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.defaults._penalty_check import PENALTY_FACTORS, labeled_rows_penalty_factor, one_standard_error_choice
from skssl.svm.defaults._regularization import auto_alpha


def _collinear(seed, n=400, n_labeled=40):
    """Five standardized measurements dominated by one size factor; the classes differ in a small direction."""
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    X = rng.randn(n, 1) * 3 + 0.1 * rng.randn(n, 5)
    X[:, 0] += 0.25 * (2 * y - 1)
    X = StandardScaler().fit_transform(X)
    mask = np.zeros(n, dtype=bool)
    mask[rng.choice(n, n_labeled, replace=False)] = True
    return X, y, mask


def _blobs(seed, n=300, n_labeled=30):
    """Two well-separated blobs: every penalty of the check classifies the labeled rows alike."""
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    X = StandardScaler().fit_transform(rng.randn(n, 4) + 6.0 * y[:, None])
    mask = np.zeros(n, dtype=bool)
    mask[rng.choice(n, n_labeled, replace=False)] = True
    return X, y, mask


def _factor(X, y, mask, weights=None):
    weights = np.ones(X.shape[0]) if weights is None else weights
    alpha = auto_alpha(X, mask, weights, unlabeled_weight=0.0)
    return labeled_rows_penalty_factor(X, y, mask, weights, alpha, 10.0, supervised=_public_predict)


def _public_predict(X, y, sample_weight, **params):
    """The check's supervised fit through the public API (the estimators hand in one that skips validation)."""
    return LinearL2SVC(**params).fit(X, y, sample_weight=sample_weight).predict


@pytest.mark.parametrize("seed", range(5))
def test_collinear_rows_get_a_lighter_penalty_and_classify_better(seed):
    X, y, mask = _collinear(seed)
    fitted = LinearL2SVC().fit(X[mask], y[mask])
    rule = auto_alpha(X[mask], np.ones(mask.sum(), dtype=bool), unlabeled_weight=0.0)
    assert fitted.alpha_ < rule
    at_rule = LinearL2SVC(alpha=rule, intercept_scaling=fitted.intercept_scaling_).fit(X[mask], y[mask])
    test = ~mask
    assert fitted.score(X[test], y[test]) > at_rule.score(X[test], y[test]) + 0.2


@pytest.mark.parametrize("seed", range(5))
def test_the_rule_stays_where_every_penalty_does_as_well(seed):
    X, y, mask = _blobs(seed)
    assert _factor(X, y, mask) == 1.0


def test_the_semi_supervised_estimators_scale_their_own_rule_by_the_factor():
    X, y, mask = _collinear(0)
    y_semi = np.where(mask, y, -1)
    factor = _factor(X, y, mask)
    assert factor < 1.0
    for Est in (TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC):
        fitted = Est(safeguard=None).fit(X, y_semi)
        assert fitted.alpha_ == pytest.approx(factor * auto_alpha(X, mask), rel=1e-12)


def test_one_standard_error_choice_takes_the_most_regularized_within_reach_of_the_best():
    # 50 rows at a best accuracy of 0.9: a standard error of 0.042.
    assert one_standard_error_choice([0.86, 0.88, 0.90], 50) == 0
    assert one_standard_error_choice([0.80, 0.88, 0.90], 50) == 1
    assert one_standard_error_choice([0.80, 0.84, 0.90], 50) == 2
    assert one_standard_error_choice([1.0, 1.0, 1.0], 50) == 0  # a perfect score has no spread: ties keep the rule


@pytest.mark.parametrize("sparse", [False, True])
def test_neither_the_order_of_the_rows_nor_repeating_instead_of_weighting_changes_the_factor(sparse):
    for seed in range(4):
        X, y, mask = _collinear(seed)
        X = np.round(X, 2)
        as_given = sp.csr_matrix if sparse else np.asarray
        first = _factor(as_given(X), y, mask)
        order = np.random.RandomState(seed).permutation(y.shape[0])
        assert _factor(as_given(X[order]), y[order], mask[order]) == first
        # The first 30 rows repeated, against the same rows at weight 2.
        repeated = (np.vstack([X, X[:30]]), np.concatenate([y, y[:30]]), np.concatenate([mask, mask[:30]]))
        weights = np.ones(y.shape[0])
        weights[:30] = 2.0
        assert _factor(as_given(repeated[0]), repeated[1], repeated[2]) == _factor(as_given(X), y, mask, weights)


def test_too_few_labeled_rows_in_a_class_keep_the_rule():
    X, y, mask = _collinear(0)
    mask[:] = False
    mask[np.flatnonzero(y == 0)[:20]] = True
    mask[np.flatnonzero(y == 1)[:1]] = True  # one row of class 1: no two folds can hold it
    assert _factor(X, y, mask) == 1.0


def test_rows_of_weight_zero_take_no_part():
    X, y, mask = _collinear(1)
    weights = np.ones(y.shape[0])
    extra = np.flatnonzero(~mask)[:25]
    weights[extra] = 0.0
    mask_with_extra = mask.copy()
    mask_with_extra[extra] = True
    assert _factor(X, y, mask_with_extra, weights) == _factor(X, y, mask)


def test_a_given_alpha_is_used_as_given_and_the_check_runs_once_per_fit(monkeypatch):
    X, y, mask = _collinear(2)
    y_semi = np.where(mask, y, -1)
    calls = []
    original = svm_base.labeled_rows_penalty_factor

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(svm_base, "labeled_rows_penalty_factor", counting)
    assert TransductiveSVC(alpha=0.05, safeguard=None).fit(X, y_semi).alpha_ == 0.05
    assert not calls
    # The safeguard's candidates (and DA's TSVM candidate) take the parent's alpha_ as a number.
    for Est in (TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC):
        calls.clear()
        Est(safeguard="agreement").fit(X, y_semi)
        assert len(calls) == 1


def test_the_factors_are_the_rule_and_two_lighter_decades():
    assert PENALTY_FACTORS == (1.0, 0.1, 0.01)


def test_a_perfect_weighted_score_that_rounds_past_one_keeps_the_rule():
    # hits / total of fractional weights, summed in different orders, can be 1 + 2e-16 where every row is right.
    above_one = np.nextafter(1.0, 2.0)
    assert one_standard_error_choice([above_one] * 3, 10) == 0
    assert one_standard_error_choice([0.5, above_one, above_one], 10) == 1


@pytest.mark.parametrize("seed", range(40))
def test_fractional_weights_on_separable_rows_fit_at_alpha_auto(seed):
    # Two separated blobs classify every held-out fold right; with weights like 0.7 or 1/3 the weighted
    # accuracy rounded past 1 and the check raised an IndexError in every estimator.
    rng = np.random.RandomState(seed)
    n = rng.randint(30, 80)
    y = rng.randint(0, 2, n)
    y[:2] = [0, 1]
    X = rng.randn(n, rng.randint(1, 4)) + 6.0 * y[:, None]
    y_semi = np.where(rng.rand(n) < 0.6, y, -1)
    y_semi[:2] = [0, 1]
    if seed % 2:
        weights = np.full(n, rng.choice([0.3, 0.7, 1 / 3, 0.1 * rng.randint(1, 30)]))
    else:
        weights = rng.rand(n) + 0.1
    # The fits must also be sound; weights below 1 count as fewer rows, so the rule's penalty is heavy here
    # (alpha_ of 2.3 on one problem, 94.7% of the rows right against 100% unweighted).
    model = LinearL2SVC().fit(X, y_semi, sample_weight=weights)
    assert model.score(X, y) > 0.9
    if seed < 6:
        Est = (TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC)[seed % 3]
        assert Est().fit(X, y_semi, sample_weight=weights).score(X, y) > 0.9

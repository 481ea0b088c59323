"""The agreement safeguard of the semi-supervised SVMs."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.base import clone

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.safeguard._safeguard import FRACTION_FLOOR, candidate_fractions, candidates_agree

from .._tiers import fast_first
from ._candidates import second_opinion

SEMI = [TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]


def _blobs(seed, n=90, d=5, n_classes=2, spread=1.0, per_class=4):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(n_classes, d))
    y = rng.integers(n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    X = centers[y] + spread * rng.normal(size=(n, d))
    y_semi = np.full(n, -1)
    for k in range(n_classes):
        y_semi[rng.choice(np.flatnonzero(y == k), per_class, replace=False)] = k
    return X, y, y_semi


@pytest.mark.parametrize("seed", range(50))
def test_candidate_fractions_are_distributions_one_standard_error_away(seed):
    rng = np.random.default_rng(seed)
    n_classes = int(rng.integers(2, 8))
    fractions = rng.dirichlet(np.full(n_classes, 0.7))
    n_labeled = float(rng.integers(2, 200))
    for moved in candidate_fractions(fractions, n_labeled):
        assert moved.shape == fractions.shape
        assert moved.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all(moved >= FRACTION_FLOOR * (1 - 1e-9) / (1 + n_classes)) and np.all(moved < 1)
    if n_classes == 2:
        spread = np.sqrt(fractions[1] * fractions[0] / n_labeled)
        up, down = candidate_fractions(fractions, n_labeled)
        assert up[1] == pytest.approx(np.clip(fractions[1] + spread, FRACTION_FLOOR, 1 - FRACTION_FLOOR))
        assert down[1] == pytest.approx(np.clip(fractions[1] - spread, FRACTION_FLOOR, 1 - FRACTION_FLOOR))


def test_candidate_fractions_of_more_labels_are_closer():
    fractions = np.array([0.2, 0.3, 0.5])
    near = candidate_fractions(fractions, 1000)
    far = candidate_fractions(fractions, 10)
    for a, b in zip(near, far):
        assert np.abs(a - fractions).sum() < np.abs(b - fractions).sum()


@pytest.mark.parametrize("seed", range(30))
def test_rows_agree_only_where_every_candidate_predicts_the_same_class(seed):
    rng = np.random.default_rng(seed)
    candidates = [rng.integers(3, size=40) for _ in range(3)]
    agree = candidates_agree(candidates)
    for i in range(40):
        assert agree[i] == (candidates[0][i] == candidates[1][i] == candidates[2][i])


def _fixed_label_objective(X, y_pm, labeled, agreed, alpha, unlabeled_weight):
    """The semi-supervised objective with labels fixed, over labeled and agreed rows (independent of skssl)."""

    def f(theta):
        w, b = theta[:-1], theta[-1]
        slack = np.maximum(0.0, 1.0 - y_pm * (X @ w + b))
        return 0.5 * (
            alpha * (w @ w + b * b) + np.mean(slack[labeled] ** 2) + unlabeled_weight * np.mean(slack[agreed] ** 2)
        )

    return f


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC])
@pytest.mark.parametrize("seed", range(6))
def test_the_safe_binary_model_minimizes_the_objective_over_the_agreed_rows(Est, seed):
    # Rebuild the candidates from public pieces, then check the returned model against scipy.
    X, _, y_semi = _blobs(seed, spread=2.5, per_class=3)
    est = Est(alpha=0.05, unlabeled_weight=0.7, safeguard="agreement").fit(X, y_semi)
    labeled = y_semi != -1
    fraction = np.mean(y_semi[labeled] == 1)
    base = clone(est).set_params(safeguard=None)
    predictions = [base.fit(X, y_semi).predict(X[~labeled])]
    for moved in candidate_fractions(np.array([1 - fraction, fraction]), labeled.sum()):
        predictions.append(clone(base).set_params(positive_fraction=moved[1]).fit(X, y_semi).predict(X[~labeled]))
    predictions.append(second_opinion(est, fraction).fit(X, y_semi).predict(X[~labeled]))
    agree = candidates_agree(predictions)
    assert est.safeguard_agreement_ == pytest.approx(agree.mean())
    y_pm = np.where(y_semi == 1, 1.0, -1.0)
    y_pm[~labeled] = np.where(predictions[0] == 1, 1.0, -1.0)
    agreed = np.zeros_like(labeled)
    agreed[np.flatnonzero(~labeled)[agree]] = True
    f = _fixed_label_objective(X, y_pm, labeled, agreed, 0.05, 0.7)
    ours = np.concatenate([est.coef_[0], est.intercept_])
    reference = minimize(f, np.zeros(X.shape[1] + 1), method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15})
    assert f(ours) <= reference.fun + 1e-9
    np.testing.assert_allclose(ours, reference.x, atol=1e-4)


def test_disputed_rows_take_no_part_in_the_model():
    # Moving a disputed row anywhere leaves the safe model unchanged; moving an agreed one changes it.
    X, _, y_semi = _blobs(7, spread=3.0, per_class=3)
    est = TransductiveSVC(alpha=0.05).fit(X, y_semi)
    labeled = y_semi != -1
    base = TransductiveSVC(alpha=0.05, safeguard=None)
    fraction = np.mean(y_semi[labeled] == 1)
    predictions = [clone(base).fit(X, y_semi).predict(X[~labeled])]
    for moved in candidate_fractions(np.array([1 - fraction, fraction]), labeled.sum()):
        predictions.append(clone(base).set_params(positive_fraction=moved[1]).fit(X, y_semi).predict(X[~labeled]))
    predictions.append(second_opinion(est, fraction).fit(X, y_semi).predict(X[~labeled]))
    agree = candidates_agree(predictions)
    assert 0 < agree.mean() < 1, "the problem must have disputed rows"
    weights = np.ones(X.shape[0])
    weights[np.flatnonzero(~labeled)[~agree]] = 0.0
    # The same refit by hand: labeled rows and agreed rows only, as one weighted l2-SVM.
    y_fixed = np.where(labeled, y_semi, -1)
    y_fixed[np.flatnonzero(~labeled)[agree]] = predictions[0][agree]
    w = np.zeros(X.shape[0])
    w[labeled] = 1 / labeled.sum()
    w[np.flatnonzero(~labeled)[agree]] = 1 / agree.sum()
    y_fixed[w == 0] = -1
    by_hand = LinearL2SVC(alpha=0.05 / 2).fit(X, y_fixed, sample_weight=w)
    np.testing.assert_allclose(est.coef_, by_hand.coef_, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("Est", SEMI)
@pytest.mark.parametrize("seed", fast_first(range(5), 2))
def test_well_separated_clusters_keep_the_semi_supervised_labels(Est, seed):
    X, y, y_semi = _blobs(seed, n_classes=3 if Est is PottsDeterministicAnnealingSVC else 2, spread=0.3)
    safe = Est().fit(X, y_semi)
    # The candidates agree everywhere; where the default's cross-validated check returns the supervised model
    # (DA's, which asks a lead of one standard error) they are not fitted, so the agreement alone shows it.
    agreement = Est(safeguard="agreement").fit(X, y_semi)
    assert agreement.safeguard_agreement_ == 1.0
    assert safe.safeguard_agreement_ == (None if safe.safeguard_fell_back_ else 1.0)
    np.testing.assert_array_equal(agreement.transduction_, y)
    np.testing.assert_array_equal(safe.transduction_, y)
    if Est is not PottsDeterministicAnnealingSVC:
        # Potts' own model can sit off the hard-label optimum (its distributions stay soft at a large alpha).
        np.testing.assert_array_equal(safe.transduction_, Est(safeguard=None).fit(X, y_semi).transduction_)


@pytest.mark.parametrize("Est", SEMI)
def test_without_the_safeguard_nothing_is_recorded(Est):
    X, _, y_semi = _blobs(0)
    assert Est(safeguard=None).fit(X, y_semi).safeguard_agreement_ is None
    y_full = np.where(y_semi == -1, 0, y_semi)
    y_full[:2] = [0, 1]
    assert Est().fit(X, y_full).safeguard_agreement_ is None  # no unlabeled rows: nothing to guard


def test_potts_distributions_follow_the_safe_model():
    X, _, y_semi = _blobs(3, n_classes=4, spread=2.5, per_class=2)
    est = PottsDeterministicAnnealingSVC().fit(X, y_semi)
    np.testing.assert_array_equal(est.classes_[est.label_distributions_.argmax(axis=1)], est.transduction_)
    np.testing.assert_allclose(est.label_distributions_.sum(axis=1), 1.0)
    unl = y_semi == -1
    np.testing.assert_array_equal(est.transduction_[unl], est.predict(X[unl]))


@pytest.mark.parametrize("Est", SEMI)
def test_class_weight_with_named_labels_and_the_safeguard(Est):
    X, _, y_semi = _blobs(4, n_classes=3, spread=2.0)
    names = np.array(["cat", "dog", "eel"], dtype=object)
    y_named = np.array([-1 if v == -1 else names[v] for v in y_semi], dtype=object)
    weights = {"cat": 2.0, "eel": 0.5}
    named = Est(class_weight=weights).fit(X, y_named)
    coded = Est(class_weight={0: 2.0, 2: 0.5}).fit(X, y_semi)
    np.testing.assert_allclose(named.coef_, coded.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(named.transduction_, names[coded.transduction_].astype(object))


@pytest.mark.parametrize("Est", SEMI)
def test_the_safeguard_is_deterministic_and_sparse_equals_dense(Est):
    X, _, y_semi = _blobs(5, spread=2.0)
    a = Est().fit(X, y_semi)
    b = Est().fit(X, y_semi)
    c = Est().fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_allclose(a.coef_, c.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(a.transduction_, c.transduction_)


@pytest.mark.parametrize("Est", SEMI)
def test_the_second_opinion_leaves_out_the_rows_it_disputes(Est):
    # On this problem the second optimizer (TSVM for the annealing, TSVM without the annealing of lam_u for
    # TSVM) ends on the other side of a few rows than the three candidates at moved fractions.
    X, _, y_semi = _blobs(0, spread=2.5, per_class=3)
    est = Est(alpha=0.05, unlabeled_weight=0.7, safeguard="agreement").fit(X, y_semi)
    alone = Est(alpha=0.05, unlabeled_weight=0.7, safeguard="agreement")
    alone._second_opinion = lambda fractions, class_weight: None
    alone.fit(X, y_semi)
    assert est.safeguard_agreement_ < alone.safeguard_agreement_

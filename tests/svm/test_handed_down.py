"""What the defaults chose (`class_fractions_` beside `alpha_`), and what a fit hands to the fits it starts."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from skssl.datasets import make_semi_supervised
from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm import _classes
from skssl.svm.defaults import _cluster_fractions
from skssl.utils._labeled_folds import fold_splits, stratified_fold_ids

from .._tiers import fast_first
from ._problems import bars_along_the_labels


def _wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), make_semi_supervised(y, 24, random_state=3)


def _one_solve(est):
    """The estimator at the values ``est``'s defaults chose, without safeguard."""
    fractions = est.class_fractions_
    binary_one_vs_rest = fractions.shape[0] == 2 and not isinstance(est, PottsDeterministicAnnealingSVC)
    params = {
        "alpha": est.alpha_,
        "intercept_scaling": est.intercept_scaling_,
        "positive_fraction": float(fractions[1]) if binary_one_vs_rest else fractions,
        "safeguard": None,
    }
    if hasattr(est, "initial_temperature_"):
        params["initial_temperature"] = est.initial_temperature_
    return type(est)(**params)


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC])
@pytest.mark.parametrize("problem", fast_first(["bars", "wine"]))
def test_one_solve_at_what_the_defaults_chose_reproduces_their_model(Est, problem):
    X, y_semi = _wine() if problem == "wine" else bars_along_the_labels(0)[::2]
    solved = Est(safeguard=None).fit(X, y_semi)
    n_classes = np.unique(y_semi[y_semi != -1]).shape[0]
    assert solved.class_fractions_.shape == (n_classes,)
    np.testing.assert_allclose(solved.class_fractions_.sum(), 1.0)
    again = _one_solve(solved).fit(X, y_semi)
    np.testing.assert_allclose(again.coef_, solved.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(again.intercept_, solved.intercept_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(again.transduction_, solved.transduction_)
    np.testing.assert_array_equal(again.class_fractions_, solved.class_fractions_)
    # The default fit decides the same before its safeguard: its values give the same solve.
    default = Est().fit(X, y_semi)
    for name in ("alpha_", "intercept_scaling_", "class_fractions_", "initial_temperature_"):
        np.testing.assert_array_equal(getattr(default, name, None), getattr(solved, name, None))


def test_class_fractions_are_the_given_ones_when_given():
    X, y_semi = bars_along_the_labels(1)[::2]
    est = TransductiveSVC(positive_fraction=0.3, safeguard=None).fit(X, y_semi)
    np.testing.assert_allclose(est.class_fractions_, [0.7, 0.3])


def test_the_check_s_folds_reuse_the_start_and_the_clusters_of_the_fit(monkeypatch):
    # The start's check (four annealing fits) and the k-means ran again in each fold of the check: once each now.
    counts = {"start": 0, "kmeans": 0}
    choose, kmeans = _classes.choose_initial_temperature, _cluster_fractions._kmeans_labels

    def counting_choose(*args):
        counts["start"] += 1
        return choose(*args)

    def counting_kmeans(*args):
        counts["kmeans"] += 1
        return kmeans(*args)

    monkeypatch.setattr(_classes, "choose_initial_temperature", counting_choose)
    monkeypatch.setattr(_cluster_fractions, "_kmeans_labels", counting_kmeans)
    X, y_semi = bars_along_the_labels(0)[::2]
    est = DeterministicAnnealingSVC(safeguard="cross_validation").fit(X, y_semi)
    assert est.safeguard_scores_ is not None  # the check ran, on several folds
    assert counts == {"start": 1, "kmeans": 1}


@pytest.mark.parametrize("Est", [TransductiveSVC, DeterministicAnnealingSVC])
def test_each_fold_checks_alpha_once_and_both_sides_use_its_factor(monkeypatch, Est):
    # alpha's check ran in each fold's supervised fit and again in its semi-supervised fit: once per fold now,
    # by the supervised fit, whose factor the semi-supervised fit of the same fold is handed.
    from skssl.svm import _base

    checked, handed = [], []
    factor_of = _base.labeled_rows_penalty_factor

    def counting(X, y_enc, mask, *args, **kwargs):
        factor = factor_of(X, y_enc, mask, *args, **kwargs)
        checked.append((frozenset(np.flatnonzero(mask).tolist()) if X.shape[0] == mask.sum() else None, factor))
        return factor

    apply, check = (
        _base._LinearFitMixin._check_penalty_on_labeled_rows,
        _base._LinearFitMixin._fall_back_where_held_out_labels_say,
    )
    in_check = []

    def recording(self, rows):
        if in_check and self._uses_unlabeled_rows:  # a fold's semi-supervised fit
            handed.append(self._given.penalty_factor)
        return apply(self, rows)

    def checking(self, rows):
        in_check.append(True)
        try:
            return check(self, rows)
        finally:
            in_check.pop()

    monkeypatch.setattr(_base, "labeled_rows_penalty_factor", counting)
    monkeypatch.setattr(_base._LinearFitMixin, "_check_penalty_on_labeled_rows", recording)
    monkeypatch.setattr(_base._LinearFitMixin, "_fall_back_where_held_out_labels_say", checking)
    X, y, y_semi = _wine_binary()
    est = Est(safeguard="cross_validation").fit(X, y_semi)
    assert est.safeguard_scores_ is not None
    n_folds = 5
    supervised_checks = [factor for rows, factor in checked if rows is not None]
    # The parent's check, one per fold (supervised side), and the fallback's refit if the check fell back.
    assert len(checked) == 1 + n_folds + int(est.safeguard_fell_back_)
    assert len(supervised_checks) == n_folds + int(est.safeguard_fell_back_)
    # The folds' semi-supervised fits (as many as the check needed) are handed the supervised fits' factors,
    # fold for fold.
    assert 1 <= len(handed) <= n_folds
    assert handed == supervised_checks[: len(handed)]


def _wine_binary():
    X, y = load_wine(return_X_y=True)
    y = (y == 0).astype(int)
    return StandardScaler().fit_transform(X), y, make_semi_supervised(y, 40, random_state=0)


def test_the_safeguard_s_candidates_carry_no_private_answers():
    X, y_semi = bars_along_the_labels(0)[::2]
    est = DeterministicAnnealingSVC(safeguard=None).fit(X, y_semi)
    candidates = est._safeguard_candidates(est.class_fractions_, 16.0, None, est._resolved_parameters())
    for candidate in candidates:
        assert not [name for name in vars(candidate) if name.startswith("_parent")]


def test_the_fold_builder_deals_each_class_in_turn():
    classes = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1])
    fold = stratified_fold_ids(classes, 3)
    assert fold.tolist() == [0, 0, 1, 2, 1, 2, 0, 0, 1]


@pytest.mark.parametrize("seed", [None, 0, 7])
def test_the_fold_builder_fills_runs_as_stratified_k_fold(seed):
    rng = np.random.RandomState(0)
    classes = rng.randint(0, 3, 40)
    fold = stratified_fold_ids(classes, 4, dealt=False, seed=seed)
    splitter = StratifiedKFold(4, shuffle=seed is not None, random_state=seed)
    for (train, held), (sk_train, sk_held) in zip(fold_splits(fold), splitter.split(classes, classes)):
        np.testing.assert_array_equal(held, sk_held)
        np.testing.assert_array_equal(train, sk_train)


def test_the_fold_builder_refuses_a_single_fold():
    with pytest.raises(ValueError, match="n_folds must be at least 2"):
        stratified_fold_ids(np.array([0, 1, 0, 1]), 1)

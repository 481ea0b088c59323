"""initial_temperature of the annealing estimators: the first temperature over unlabeled_weight.

A number is used as it is (SVMlin's 10 is the hot start); ``"auto"`` lets a
binary DA fit choose between the hot and the cold start by hiding half of
its labels in turn (:mod:`skssl.svm.defaults._annealing_start`).
"""

import numpy as np
import pytest

from skssl.svm import DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC
from skssl.svm.defaults import _annealing_start
from skssl.svm.solvers._annealing import DA_INIT_TEMP
from skssl.svm.defaults._annealing_start import COLD_START, HOT_START, label_check_halves, start_from_counts
from skssl.svm._callback import solver_callback
from skssl.svm.defaults._cluster_fractions import fractions_from_clusters
from skssl.svm.defaults._regularization import auto_alpha

from .._tiers import fast_first

ANNEALING = [DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]


def _problem(seed, n_classes=2, n=70):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 3.0, size=(n_classes, 4))
    y = rng.integers(0, n_classes, n)
    X = centres[y] + rng.normal(size=(n, 4))
    y_semi = np.where(rng.random(n) < 0.25, y, -1)
    y_semi[:n_classes] = np.arange(n_classes)
    X[:n_classes] = centres
    return X, y_semi


def _first_temperature(estimator, X, y_semi):
    seen = []

    def record(event):
        if event.stage == "init":
            seen.append(event.temperature)

    with solver_callback(record):
        estimator.fit(X, y_semi)
    return seen


@pytest.mark.parametrize("Est", ANNEALING)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_every_annealing_path_starts_at_initial_temperature_times_unlabeled_weight(Est, n_classes):
    X, y_semi = _problem(n_classes, n_classes)
    assert Est().initial_temperature == "auto"
    assert HOT_START == DA_INIT_TEMP == 10.0
    hot = Est(alpha=0.05, unlabeled_weight=0.5, initial_temperature=10.0, safeguard=None)
    assert set(_first_temperature(hot, X, y_semi)) == {10.0 * 0.5}
    assert hot.initial_temperature_ == 10.0
    cold = Est(alpha=0.05, unlabeled_weight=0.5, initial_temperature=0.1, safeguard=None)
    assert set(_first_temperature(cold, X, y_semi)) == {0.05}
    assert cold.initial_temperature_ == 0.1
    # A cold start needs fewer temperatures than a hot one before the beliefs harden.
    hot_path = Est(alpha=0.05, unlabeled_weight=0.5, safeguard=None).fit(X, y_semi).n_iter_
    cold_path = cold.fit(X, y_semi).n_iter_
    assert cold_path < hot_path


@pytest.mark.parametrize("Est", ANNEALING)
@pytest.mark.parametrize("bad", [0.0, -1.0, "hot", np.inf * 0])
def test_a_bad_initial_temperature_is_refused_by_name(Est, bad):
    X, y_semi = _problem(0)
    with pytest.raises(ValueError, match="initial_temperature"):
        Est(initial_temperature=bad).fit(X, y_semi)


# ---------------------------------------------------------------- "auto"


@pytest.mark.parametrize("Est, n_classes", [(DeterministicAnnealingSVC, 3), (PottsDeterministicAnnealingSVC, 2)])
def test_auto_is_svmlins_hot_start_without_the_check_for_multi_class_and_potts(Est, n_classes):
    X, y_semi = _problem(5, n_classes)
    seen = _first_temperature(Est(alpha=0.05), X, y_semi)
    assert set(seen) == {HOT_START}  # no cold fit ran: no check
    auto = Est(alpha=0.05).fit(X, y_semi)
    assert auto.initial_temperature_ == HOT_START
    np.testing.assert_array_equal(auto.coef_, Est(alpha=0.05, initial_temperature=10.0).fit(X, y_semi).coef_)


@pytest.mark.parametrize("seed", fast_first(range(8), 3))
def test_auto_fits_the_model_of_the_start_it_chose_with_the_safeguard_at_that_start(seed):
    X, y_semi = _problem(seed, n=90)
    X[:, 0] *= np.random.default_rng(seed).uniform(0.5, 4.0)  # clusters of several shapes
    auto = DeterministicAnnealingSVC().fit(X, y_semi)
    assert auto.initial_temperature_ in (HOT_START, COLD_START)
    explicit = DeterministicAnnealingSVC(initial_temperature=auto.initial_temperature_).fit(X, y_semi)
    np.testing.assert_array_equal(auto.coef_, explicit.coef_)
    np.testing.assert_array_equal(auto.intercept_, explicit.intercept_)
    assert auto.safeguard_agreement_ == explicit.safeguard_agreement_


def _counts_by_hand(X, y_semi):
    """The check's counts from the public API alone: hide each half's labels, fit from each start, count.

    ``{start: [count on the first half, count on the second]}``, every fit run.
    """
    labeled = np.flatnonzero(y_semi != -1)
    said = np.bincount(y_semi[labeled], minlength=2) / labeled.shape[0]
    # The check runs at the fractions of the whole fit: the clusters' where they replace the labels' (these
    # problems are well-separated blobs, so they often do).
    fraction = float(fractions_from_clusters(X, y_semi, y_semi != -1, said)[1])
    # The check's fits keep the whole fit's factor of alpha="auto" (skssl.svm.defaults._penalty_check), applied to the
    # rule's value for their own labels, and the whole fit's intercept_scaling_ (the same rows).
    whole = DeterministicAnnealingSVC(initial_temperature=HOT_START, safeguard=None).fit(X, y_semi)  # no check
    factor = whole.alpha_ / auto_alpha(X, y_semi != -1)
    correct = {HOT_START: [], COLD_START: []}
    for rows in label_check_halves(y_semi, labeled, X):
        y_check = y_semi.copy()
        y_check[rows] = -1
        alpha = factor * auto_alpha(X, y_check != -1)
        for start in correct:
            model = DeterministicAnnealingSVC(
                alpha=alpha,
                intercept_scaling=whole.intercept_scaling_,
                initial_temperature=start,
                positive_fraction=fraction,
                safeguard=None,
            )
            correct[start].append(int(np.sum(model.fit(X, y_check).predict(X[rows]) == y_semi[rows])))
    return correct


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("more_needed", [-1000, 1000, -2, 0, 2])
def test_auto_takes_the_start_that_the_counts_and_the_margin_give(monkeypatch, seed, more_needed):
    X, y_semi = _problem(seed, n=90)
    recorded = []
    counter = _annealing_start.count_correct_on_hidden_halves
    monkeypatch.setattr(
        _annealing_start, "count_correct_on_hidden_halves", lambda *a: recorded.append(counter(*a)) or recorded[-1]
    )
    monkeypatch.setattr(_annealing_start, "MIN_MORE_CORRECT", more_needed)
    auto = DeterministicAnnealingSVC(safeguard="agreement").fit(X, y_semi)
    by_hand = _counts_by_hand(X, y_semi)  # an independent re-implementation, every fit run
    (counted,) = recorded  # one check
    hot, cold = sum(by_hand[HOT_START]), by_hand[COLD_START]
    assert counted[HOT_START] == hot
    # The cold start's fits stop before a half once neither all of the halves left wrong nor all right could
    # change the start.
    sizes = [half.size for half in label_check_halves(y_semi, np.flatnonzero(y_semi != -1), X)]
    needed, expected = hot + more_needed, 0
    for i in range(2):
        if expected + sum(sizes[i:]) < needed or expected >= needed:
            break
        expected += cold[i]
    assert counted[COLD_START] == expected
    full = {HOT_START: hot, COLD_START: sum(cold)}
    assert auto.initial_temperature_ == start_from_counts(full)  # the start of all four fits
    if abs(more_needed) == 1000:
        assert auto.initial_temperature_ == (COLD_START if more_needed < 0 else HOT_START)


def test_start_from_counts_keeps_the_hot_start_unless_the_cold_one_labels_two_more_rows_right():
    assert start_from_counts(None) == HOT_START
    assert start_from_counts({HOT_START: 40, COLD_START: 40}) == HOT_START
    assert start_from_counts({HOT_START: 40, COLD_START: 41}) == HOT_START
    assert start_from_counts({HOT_START: 40, COLD_START: 42}) == COLD_START
    assert start_from_counts({HOT_START: 0, COLD_START: 50}) == COLD_START


def test_label_check_halves_are_stratified_disjoint_and_cover_the_labeled_rows():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(4, 200))
        y = rng.integers(0, 2, n)
        y[:2], y[2:4] = 0, 1
        labeled = np.sort(rng.choice(n, size=int(rng.integers(4, n + 1)), replace=False))
        labeled = np.union1d(labeled, np.arange(4))
        first, second = label_check_halves(y, labeled)
        assert np.intersect1d(first, second).size == 0
        np.testing.assert_array_equal(np.sort(np.concatenate([first, second])), labeled)
        for k in (0, 1):
            assert abs(np.sum(y[first] == k) - np.sum(y[second] == k)) <= 1
        again = label_check_halves(y, labeled)
        np.testing.assert_array_equal(again[0], first)


def test_the_check_is_skipped_with_one_labeled_row_of_a_class_or_no_unlabeled_row():
    X, y_semi = _problem(1, n=60)
    one = y_semi.copy()
    one[(one == 1) & (np.arange(60) > 1)] = -1  # a single labeled row of class 1
    assert label_check_halves(one, np.flatnonzero(one != -1)) == []
    assert set(_first_temperature(DeterministicAnnealingSVC(), X, one)) == {HOT_START}
    X_lab, y_lab = X[y_semi != -1], y_semi[y_semi != -1]
    assert DeterministicAnnealingSVC().fit(X_lab, y_lab).initial_temperature_ == HOT_START


def test_a_given_alpha_keeps_svmlins_start_without_the_check(monkeypatch):
    X, y_semi = _problem(2, n=90)
    monkeypatch.setattr(_annealing_start, "MIN_MORE_CORRECT", -1000)  # the check, if run, would take the cold start
    assert set(_first_temperature(DeterministicAnnealingSVC(alpha=0.05), X, y_semi)) == {HOT_START}
    assert DeterministicAnnealingSVC().fit(X, y_semi).initial_temperature_ == COLD_START


@pytest.mark.parametrize("sparse", fast_first([False, True]))
# Seed 0 in the fast suite, all three in the whole suite.
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_auto_gives_the_same_halves_and_model_for_the_rows_in_any_order(monkeypatch, sparse, seed):
    import scipy.sparse as sp

    X, y_semi = _problem(seed, n=90)
    X = sp.csr_matrix(X * (np.abs(X) > 0.3)) if sparse else X
    perm = np.random.default_rng(seed).permutation(90)
    labeled = np.flatnonzero(y_semi != -1)
    halves = label_check_halves(y_semi, labeled, X)
    moved = label_check_halves(y_semi[perm], np.flatnonzero(y_semi[perm] != -1), X[perm])
    for half, moved_half in zip(halves, moved):
        np.testing.assert_array_equal(np.sort(perm[moved_half]), half)
    for more_needed in (-1000, 1000, _annealing_start.MIN_MORE_CORRECT):
        monkeypatch.setattr(_annealing_start, "MIN_MORE_CORRECT", more_needed)
        a = DeterministicAnnealingSVC().fit(X, y_semi)
        b = DeterministicAnnealingSVC().fit(X[perm], y_semi[perm])
        assert a.initial_temperature_ == b.initial_temperature_
        np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-5 * np.abs(a.coef_).max())


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_the_halves_do_not_depend_on_the_scale_of_the_rows(sparse, seed):
    """alpha="auto" makes the model scale-free, so the check's halves must be too (a digest of bytes was not)."""
    import scipy.sparse as sp

    X, y_semi = _problem(seed, n=90)
    X = sp.csr_matrix(X * (np.abs(X) > 0.3)) if sparse else X
    labeled = np.flatnonzero(y_semi != -1)
    halves = label_check_halves(y_semi, labeled, X)
    for scale in (0.01, 3.0, 100.0):
        for half, scaled_half in zip(halves, label_check_halves(y_semi, labeled, X * scale)):
            np.testing.assert_array_equal(scaled_half, half)


def test_auto_neither_changes_y_nor_depends_on_a_previous_fit():
    X, y_semi = _problem(3, n=90)
    before = y_semi.copy()
    est = DeterministicAnnealingSVC()
    first = est.fit(X, y_semi).coef_.copy()
    np.testing.assert_array_equal(y_semi, before)
    est.set_params(initial_temperature=0.1).fit(X, y_semi)
    np.testing.assert_array_equal(est.set_params(initial_temperature="auto").fit(X, y_semi).coef_, first)


def test_verbose_reports_the_check(capsys):
    X, y_semi = _problem(4, n=90)
    est = DeterministicAnnealingSVC(verbose=1).fit(X, y_semi)
    out = capsys.readouterr().out
    assert f"initial_temperature={est.initial_temperature_}" in out and "the cold start" in out

"""The safeguard's cross-validated fallback (skssl.svm.safeguard._fallback_check): its comparison and its contract."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.safeguard._fallback_check import (
    FoldComparison,
    asks_held_out_labels,
    compare_on_folds,
    prefers_supervised,
)

from .._tiers import fast_first
from ._problems import bars_along_the_labels

ESTIMATORS = [TransductiveSVC, DeterministicAnnealingSVC]


def _gap_across_the_labels(seed, gap=4.0, n=300, n_labeled=30):
    """Two clusters along x0 (a density gap) while the labels follow x1: the gap is the wrong separator."""
    rng = np.random.RandomState(seed)
    x0 = np.where(rng.rand(n) < 0.5, -gap, gap) + rng.randn(n)
    x1 = rng.randn(n)
    X = np.c_[x0, x1]
    y = (x1 + 0.3 * rng.randn(n) > 0).astype(int)
    y_semi = np.full(n, -1)
    labeled = rng.choice(n, n_labeled, replace=False)
    y_semi[labeled] = y[labeled]
    return X, y, y_semi


def test_the_scores_are_the_held_out_accuracies():
    X = np.arange(40.0).reshape(20, 2)
    y = np.repeat([0, 1], 10)
    labeled = np.arange(20)
    right = lambda rows: y[rows]  # noqa: E731
    always_0 = lambda rows: np.zeros_like(rows)  # noqa: E731
    found = compare_on_folds(X, y, labeled, np.ones(20), lambda h, r: always_0(r), lambda t, r: right(r))
    np.testing.assert_allclose(found.scores, [1.0, 0.5])
    np.testing.assert_allclose(found.discordant, [10.0, 0.0])  # only the supervised model is right on class 1
    # Weights count as repeats: class 1, which always_0 gets wrong, twice as heavy.
    doubled = np.where(y == 1, 2.0, 1.0)
    found = compare_on_folds(X, y, labeled, doubled, lambda h, r: always_0(r), lambda t, r: right(r))
    np.testing.assert_allclose(found.scores, [1.0, 1 / 3])
    np.testing.assert_allclose(found.discordant, [20.0, 0.0])


def _fold_problem(rng):
    """Rows with repeats, 2 to 4 classes, weights; predictions right with a per-model, per-call probability."""
    n, n_classes = rng.randint(20, 120), rng.randint(2, 5)
    X = rng.randint(0, 6, size=(n, 3)).astype(float)
    y = rng.randint(0, n_classes, n)
    y[: 5 * n_classes] = np.tile(np.arange(n_classes), 5)
    weights = rng.choice([1.0, 2.0], n) if rng.rand() < 0.5 else rng.choice([0.3, 1.0, 2.7], n)
    return X, y, weights, np.arange(n), n_classes


@pytest.mark.parametrize("margin", [None, 1.0, 0.5, 3.0])
@pytest.mark.parametrize("seed", range(60))
def test_the_folds_stop_only_when_the_rest_cannot_change_the_outcome(seed, margin):
    # 240 random problems: the check that stops once settled decides what the check of every fold decides, and
    # it fits every fold while the outcome is open.
    rng = np.random.RandomState(seed)
    X, y, weights, labeled, n_classes = _fold_problem(rng)
    accuracy = {"semi": rng.rand(), "supervised": rng.rand()}

    def model(kind, seed_of_call):
        def predict(*args):
            draw = np.random.RandomState(seed_of_call + len(args[0]))
            rows = args[-1]
            right = draw.rand(rows.size) < accuracy[kind]
            return np.where(right, y[rows], (y[rows] + 1) % n_classes)

        return predict

    semi, supervised = model("semi", 1000 * seed), model("supervised", 1000 * seed + 7)
    full = compare_on_folds(X, y, labeled, weights, semi, supervised)
    early = compare_on_folds(X, y, labeled, weights, semi, supervised, until_settled=True, margin=margin)
    assert full.n_fitted == full.n_folds == early.n_folds
    assert prefers_supervised(early, margin) == prefers_supervised(full, margin)
    if early.n_fitted == full.n_fitted:
        np.testing.assert_array_equal(early.scores, full.scores)
    else:  # stopped early: the rest could not have changed it, so a fold more would not either
        assert early.n_fitted < full.n_fitted


@pytest.mark.parametrize("margin", [None, 1.0])
def test_fractional_weights_of_folds_all_right_settle_without_a_numpy_warning(margin):
    # A fold's weight total and its dot product with the rows right round differently: "all right" left a wrong
    # weight of -1e-17, a square root of a negative number and NaN in the settled test (a RuntimeWarning in fit).
    n_warned = 0
    for seed in range(100):
        rng = np.random.RandomState(seed)
        n = rng.randint(10, 60)
        X = rng.randn(n, 2)
        y = rng.randint(0, 2, n)
        y[:5], y[5:10] = 0, 1
        weights = np.full(n, rng.choice([0.3, 0.7, 1 / 3, 0.1 * rng.randint(1, 30)]))
        right = lambda *args, y=y: y[args[-1]]  # noqa: E731 (both models label every held-out row right)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            early = compare_on_folds(X, y, np.arange(n), weights, right, right, until_settled=True, margin=margin)
        n_warned += len(caught)
        assert not prefers_supervised(early, margin) if margin is None else prefers_supervised(early, margin)
    assert n_warned == 0  # (with a margin, some of these checks warned before the fix)


def test_the_folds_stop_on_a_settled_outcome_and_not_on_an_open_one():
    X = np.arange(40.0).reshape(20, 2)
    y = np.repeat([0, 1], 10)
    labeled = np.arange(20)
    right = lambda h, rows: y[rows]  # noqa: E731
    always_0 = lambda h, rows: np.zeros_like(rows)  # noqa: E731
    # Supervised right on all 20, semi-supervised on half: after one fold of 4 rows, the other 16 cannot lift it
    # from 2 to more than 18 of 20.
    assert compare_on_folds(X, y, labeled, np.ones(20), always_0, right, until_settled=True).n_fitted == 1
    # Both right everywhere: a tie stays open until the last fold (ties keep the semi-supervised model).
    assert compare_on_folds(X, y, labeled, np.ones(20), right, right, until_settled=True).n_fitted == 5
    # McNemar's margin: a semi-supervised lead of c - b = 4 of 4 discordant rows is not yet > 3 sqrt(4).
    assert compare_on_folds(X, y, labeled, np.ones(20), right, always_0, until_settled=True, margin=3.0).n_fitted > 1


@pytest.mark.parametrize("seed", range(20))
def test_the_discordant_weights_are_the_difference_of_the_scores(seed):
    # Random predictions, weights and repeats: c - b is the semi-supervised lead in weight, b + c at most the total.
    rng = np.random.RandomState(seed)
    n, n_classes = rng.randint(10, 60), rng.randint(2, 5)
    X = rng.randint(0, 4, size=(n, 2)).astype(float)  # repeats of rows
    y = rng.randint(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    y[n_classes : 2 * n_classes] = np.arange(n_classes)
    weights = rng.choice([0.5, 1.0, 2.0], n)
    labeled = np.flatnonzero(rng.rand(n) < 0.8)
    labeled = np.union1d(labeled, np.arange(2 * n_classes))
    guess = lambda *args: rng.randint(0, n_classes, args[-1].size)  # noqa: E731
    found = compare_on_folds(X, y, labeled, weights, guess, guess)
    if found is None:
        return
    b, c = found.discordant
    total = weights[labeled].sum()
    assert b >= 0 and c >= 0 and b + c <= total * (1 + 1e-12)
    np.testing.assert_allclose((c - b) / total, found.scores[1] - found.scores[0], atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_a_margin_asks_more_of_the_semi_supervised_model(seed):
    # The margin's decisions on random comparisons: no margin is the scores' comparison, a larger margin falls
    # back at least as often, and a tie falls back under any margin.
    rng = np.random.RandomState(seed)
    for _ in range(50):
        b, c = rng.randint(0, 30, 2).astype(float)
        total = b + c + rng.randint(0, 30)
        agree = rng.rand() * (total - b - c)
        found = FoldComparison(np.array([agree + b, agree + c]) / max(total, 1.0), np.array([b, c]))
        assert prefers_supervised(found) == (b > c)
        decisions = [prefers_supervised(found, margin) for margin in (0.0, 0.5, 1.0, 2.0)]
        assert decisions == sorted(decisions)  # False before True
        if b == c:
            assert all(decisions)
        assert decisions[2] == (not c - b > np.sqrt(b + c))


@pytest.mark.parametrize(
    ("b", "c", "falls_back"),
    [(0, 0, True), (0, 1, True), (1, 3, True), (3, 6, True), (0, 2, False), (1, 4, False), (5, 1, True)],
)
def test_the_margin_s_boundary(b, c, falls_back):
    # One standard error is sqrt(b + c): a lead of exactly one falls back (0, 1; 1, 3; 3, 6), more keeps.
    found = FoldComparison(np.array([0.5, 0.5 + (c - b) / 20]), np.array([float(b), float(c)]))
    assert prefers_supervised(found, 1.0) is falls_back


def test_the_folds_hide_every_repeat_of_a_held_out_row_and_train_on_the_others():
    rng = np.random.RandomState(0)
    X = rng.randn(12, 3)
    X = np.vstack([X, X[:4]])  # rows 12 to 15 repeat rows 0 to 3
    y = np.r_[np.repeat([0, 1], 6), np.repeat([0, 1], 2)[[0, 1, 2, 3]]]
    y[12:16] = y[:4]
    labeled = np.arange(16)
    seen, trained = [], []

    def supervised(train_rows, test_rows):
        trained.append(set(train_rows.tolist()))
        return y[test_rows]

    def semi(hidden, test_rows):
        seen.append((set(hidden.tolist()), set(test_rows.tolist())))
        # The supervised folds are fitted first, in fold order: the k-th hidden set pairs with the k-th training set.
        fold_train = trained[len(seen) - 1]
        assert not fold_train & seen[-1][0] and fold_train | seen[-1][0] == set(range(16))
        return y[test_rows]

    compare_on_folds(X, y, labeled, np.ones(16), semi, supervised)
    hidden_sets = [h for h, _ in seen]
    assert set().union(*hidden_sets) == set(range(16))
    for hidden in hidden_sets:
        for row in range(4):
            assert (row in hidden) == (row + 12 in hidden)


def test_too_few_labels_for_two_folds_keep_the_semi_supervised_model():
    X = np.arange(10.0).reshape(5, 2)
    y = np.array([0, 0, 0, 0, 1])
    assert compare_on_folds(X, y, np.arange(5), np.ones(5), None, None) is None
    X, y, y_semi = _gap_across_the_labels(0)
    y_semi[:] = -1
    y_semi[:5] = [0, 0, 0, 0, 1]
    est = TransductiveSVC(safeguard="cross_validation").fit(X, y_semi)
    agreement = TransductiveSVC(safeguard="agreement").fit(X, y_semi)
    assert est.safeguard_scores_ is None
    np.testing.assert_array_equal(est.coef_, agreement.coef_)


def _spying_on_the_check(monkeypatch):
    """Record what the check's folds find in fits that follow."""
    from skssl.svm import _base

    found = []

    def spy(*args, **settling):
        found.append(compare_on_folds(*args, **settling))
        return found[-1]

    monkeypatch.setattr(_base, "compare_on_folds", spy)
    return found


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("seed", fast_first(range(3)))
def test_the_model_is_the_agreement_model_or_the_supervised_l2_svm(Est, seed, monkeypatch):
    X, y, y_semi = _gap_across_the_labels(seed)
    found = _spying_on_the_check(monkeypatch)
    checked = Est(safeguard="cross_validation").fit(X, y_semi)
    agreement = Est(safeguard="agreement").fit(X, y_semi)
    assert checked.safeguard_scores_.shape == (2,) and agreement.safeguard_scores_ is None
    assert len(found) == 1
    np.testing.assert_array_equal(found[0].scores, checked.safeguard_scores_)
    assert checked.safeguard_fell_back_ is bool(prefers_supervised(found[0], Est._check_margin))
    assert agreement.safeguard_fell_back_ is None
    if prefers_supervised(found[0], Est._check_margin):
        labeled = y_semi != -1
        supervised = LinearL2SVC().fit(X[labeled], y_semi[labeled])
        np.testing.assert_allclose(checked.coef_, supervised.coef_)
        np.testing.assert_allclose(checked.intercept_, supervised.intercept_)
        np.testing.assert_array_equal(checked.transduction_[~labeled], supervised.predict(X[~labeled]))
    else:
        np.testing.assert_allclose(checked.coef_, agreement.coef_)
        np.testing.assert_array_equal(checked.transduction_, agreement.transduction_)
    np.testing.assert_array_equal(checked.transduction_[y_semi != -1], y_semi[y_semi != -1])


@pytest.mark.parametrize("seed", range(2))
def test_da_keeps_its_model_only_a_standard_error_ahead(seed, monkeypatch):
    # Bars side by side: DA's model is ahead on the held-out labels in both draws; the contract either way.
    X, y, y_semi = bars_along_the_labels(seed)
    found = _spying_on_the_check(monkeypatch)
    checked = DeterministicAnnealingSVC(safeguard="cross_validation").fit(X, y_semi)
    (comparison,) = found
    labeled = y_semi != -1
    supervised = LinearL2SVC().fit(X[labeled], y_semi[labeled])
    assert comparison.scores[1] > comparison.scores[0]  # TransductiveSVC's rule would keep the model
    returned_supervised = np.allclose(checked.coef_, supervised.coef_) and np.allclose(
        checked.intercept_, supervised.intercept_
    )
    assert returned_supervised == prefers_supervised(comparison, 1.0)


def test_da_s_margin_sees_both_outcomes_on_these_problems(monkeypatch):
    # The test above must see both branches: a lead within one standard error, and one beyond it.
    found = _spying_on_the_check(monkeypatch)
    for seed in range(2):
        DeterministicAnnealingSVC(safeguard="cross_validation").fit(*bars_along_the_labels(seed)[::2])
    assert [prefers_supervised(f, 1.0) for f in found] == [True, False]
    assert not any(prefers_supervised(f) for f in found)


def test_both_outcomes_occur_on_these_problems():
    # The contract test above must see both branches.
    checked = TransductiveSVC(safeguard="cross_validation")
    scores = [checked.fit(*_gap_across_the_labels(seed)[::2]).safeguard_scores_ for seed in range(3)]
    assert {bool(s[0] > s[1]) for s in scores} == {True, False}


# Forced comparisons of 30 held-out labels (scores, discordant weights b and c) and the model each estimator returns.
AHEAD, TIE = ([0.8, 0.7], [4.0, 1.0]), ([0.7, 0.7], [3.0, 3.0])
SMALL_LEAD = ([0.6, 0.7], [6.0, 9.0])  # c - b = 3 < sqrt(15): within one standard error
CLEAR_LEAD = ([0.5, 0.8], [3.0, 12.0])  # c - b = 9 > sqrt(15)
MODEST_LEAD = ([0.6, 0.8], [3.0, 9.0])  # c - b = 6: over one standard error (3.5), under two (6.9)


@pytest.mark.parametrize(
    ("Est", "returns_supervised"),
    [
        # TransductiveSVC: the supervised model only when it is ahead.
        (TransductiveSVC, [True, False, False, False, False]),
        # DeterministicAnnealingSVC: the semi-supervised model only one standard error ahead.
        (DeterministicAnnealingSVC, [True, True, True, False, False]),
    ],
)
def test_the_fallback_follows_the_fold_comparison(Est, returns_supervised, monkeypatch):
    from skssl.svm import _base

    X, y, y_semi = _gap_across_the_labels(1)
    supervised = LinearL2SVC().fit(X[y_semi != -1], y_semi[y_semi != -1])
    agreement = Est(safeguard="agreement").fit(X, y_semi)
    cases = (AHEAD, TIE, SMALL_LEAD, CLEAR_LEAD, MODEST_LEAD)
    for (scores, discordant), falls_back in zip(cases, returns_supervised, strict=True):
        found = FoldComparison(np.array(scores), np.array(discordant))
        monkeypatch.setattr(_base, "compare_on_folds", lambda *args, found=found, **settling: found)
        for safeguard in ("cross_validation", "auto"):  # 30 labeled rows, 2 features: "auto" checks too
            fitted = Est(safeguard=safeguard).fit(X, y_semi)
            np.testing.assert_allclose(fitted.coef_, (supervised if falls_back else agreement).coef_)
            np.testing.assert_array_equal(fitted.safeguard_scores_, scores)
            assert fitted.safeguard_fell_back_ is falls_back


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("falls_back", [True, False])
def test_the_candidates_are_fitted_only_where_the_check_keeps_the_model(Est, falls_back, monkeypatch):
    # The check runs first: a model it replaces by the supervised one needs no candidates (nor their refit).
    from skssl.svm import _base

    X, y, y_semi = _gap_across_the_labels(1)
    scores, discordant = AHEAD if falls_back else CLEAR_LEAD
    found = FoldComparison(np.array(scores), np.array(discordant))
    monkeypatch.setattr(_base, "compare_on_folds", lambda *args, **settling: found)
    asked = []
    original = _base._LinearFitMixin._safeguard_candidates

    def counting(self, *args):
        asked.append(type(self).__name__)
        return original(self, *args)

    monkeypatch.setattr(_base._LinearFitMixin, "_safeguard_candidates", counting)
    fitted = Est(safeguard="cross_validation").fit(X, y_semi)
    assert fitted.safeguard_fell_back_ is falls_back
    assert asked == ([] if falls_back else [Est.__name__])
    assert (fitted.safeguard_agreement_ is None) is falls_back


def test_a_given_fraction_and_no_safeguard_skip_the_fallback():
    X, y, y_semi = _gap_across_the_labels(0)
    for fitted in (
        TransductiveSVC(positive_fraction=0.5, safeguard="cross_validation").fit(X, y_semi),
        TransductiveSVC(safeguard=None).fit(X, y_semi),
        TransductiveSVC(safeguard="agreement").fit(X, y_semi),
    ):
        assert fitted.safeguard_scores_ is None and fitted.safeguard_fell_back_ is None


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_auto_checks_the_held_out_labels_where_labeled_rows_outnumber_the_features(Estimator):
    # 30 labeled rows, 2 features: "auto" is the cross-validated check, the same model to the last bit.
    X, y, y_semi = _gap_across_the_labels(1)
    auto = Estimator().fit(X, y_semi)
    assert auto.safeguard == "auto" and auto.safeguard_scores_ is not None
    checked = Estimator(safeguard="cross_validation").fit(X, y_semi)
    np.testing.assert_array_equal(auto.coef_, checked.coef_)
    np.testing.assert_array_equal(auto.safeguard_scores_, checked.safeguard_scores_)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_auto_is_the_agreement_where_the_features_are_as_many_as_the_labeled_rows(Estimator):
    # 30 labeled rows, 30 features (the gap and the labels in the first two, noise in the rest).
    X, y, y_semi = _gap_across_the_labels(1)
    X = np.c_[X, 0.1 * np.random.RandomState(1).randn(X.shape[0], 28)]
    auto = Estimator().fit(X, y_semi)
    assert auto.safeguard_scores_ is None
    np.testing.assert_array_equal(auto.coef_, Estimator(safeguard="agreement").fit(X, y_semi).coef_)
    # One more distinct labeled row than features: the check runs.
    y_more = y_semi.copy()
    y_more[np.flatnonzero(y_semi == -1)[0]] = y[np.flatnonzero(y_semi == -1)[0]]
    assert Estimator().fit(X, y_more).safeguard_scores_ is not None


def test_auto_counts_a_repeated_labeled_row_once():
    # 20 distinct labeled rows in 20 features, each labeled row twice: the agreement, as with weights of 2.
    rng = np.random.RandomState(3)
    X = rng.randn(200, 20)
    y = (X[:, 0] > 0).astype(int)
    y_semi = np.full(200, -1)
    labeled = np.r_[np.flatnonzero(y == 0)[:10], np.flatnonzero(y == 1)[:10]]
    y_semi[labeled] = y[labeled]
    X_rep = np.vstack([X, X[labeled]])
    y_rep = np.r_[y_semi, y_semi[labeled]]
    assert asks_held_out_labels("auto", X_rep, np.flatnonzero(y_rep != -1)) is False
    assert asks_held_out_labels("auto", X_rep[:, :19], np.flatnonzero(y_rep != -1)) is True
    repeated = TransductiveSVC().fit(X_rep, y_rep)
    weighted = TransductiveSVC().fit(X, y_semi, sample_weight=np.where(y_semi != -1, 2.0, 1.0))
    assert repeated.safeguard_scores_ is None and weighted.safeguard_scores_ is None
    np.testing.assert_allclose(repeated.coef_, weighted.coef_, rtol=1e-6, atol=1e-8)


def test_verbose_gives_the_comparison_and_da_s_margin(capsys):
    X, y, y_semi = _gap_across_the_labels(1)
    TransductiveSVC(safeguard="cross_validation", verbose=1).fit(X, y_semi)
    out = capsys.readouterr().out
    assert "of the held-out rows right" in out and "must lead by" not in out
    DeterministicAnnealingSVC(safeguard="cross_validation", verbose=1).fit(X, y_semi)
    assert "must lead by more than 1 standard error of the difference" in capsys.readouterr().out


def test_verbose_says_what_auto_chose(capsys):
    X, y, y_semi = _gap_across_the_labels(1)
    TransductiveSVC(verbose=1).fit(X, y_semi)
    assert "safeguard='auto': the distinct labeled rows outnumber the features" in capsys.readouterr().out
    X_wide = np.c_[X, np.random.RandomState(1).randn(X.shape[0], 28)]
    TransductiveSVC(verbose=1).fit(X_wide, y_semi)
    assert "the 30 features, so the agreement alone" in capsys.readouterr().out


def test_the_safeguard_s_choice_for_each_value():
    X = np.random.RandomState(0).randn(10, 3)
    few, many = np.arange(3), np.arange(10)
    assert [asks_held_out_labels(s, X, many) for s in ("auto", "agreement", "cross_validation", None)] == [
        True,
        False,
        True,
        False,
    ]
    assert [asks_held_out_labels(s, X, few) for s in ("auto", "cross_validation")] == [False, True]


def test_potts_distributions_follow_the_fallback(monkeypatch):
    from skssl.svm import _base

    rng = np.random.RandomState(0)
    X = np.vstack([rng.randn(40, 2) + c for c in ([0, 0], [4, 0], [0, 4])])
    y = np.repeat([0, 1, 2], 40)
    y_semi = np.full(120, -1)
    y_semi[::8] = y[::8]
    found = FoldComparison(np.array([0.9, 0.5]), np.array([12.0, 0.0]))
    monkeypatch.setattr(_base, "compare_on_folds", lambda *args, **settling: found)
    est = PottsDeterministicAnnealingSVC(safeguard="cross_validation").fit(X, y_semi)
    np.testing.assert_array_equal(est.classes_[est.label_distributions_.argmax(axis=1)], est.transduction_)
    labeled = y_semi != -1
    np.testing.assert_allclose(est.coef_, LinearL2SVC().fit(X[labeled], y_semi[labeled]).coef_)
    assert est.safeguard_fell_back_ is True
    kept = FoldComparison(np.array([0.5, 0.9]), np.array([0.0, 12.0]))
    monkeypatch.setattr(_base, "compare_on_folds", lambda *args, **settling: kept)
    assert PottsDeterministicAnnealingSVC(safeguard="cross_validation").fit(X, y_semi).safeguard_fell_back_ is False


def test_the_fallback_leaves_the_caller_s_arrays_and_is_deterministic():
    X, y, y_semi = _gap_across_the_labels(2)
    X0, y0 = X.copy(), y_semi.copy()
    first = TransductiveSVC(safeguard="cross_validation").fit(X, y_semi)
    second = clone(first).fit(X, y_semi)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y_semi, y0)
    np.testing.assert_array_equal(first.coef_, second.coef_)

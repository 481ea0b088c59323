"""Unit tests of CurriculumLabelingClassifier on hand-made probabilities and small data."""

import importlib.util
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning, UnsetMetadataPassedError
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.model_selection import cross_validate
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils import get_tags

from skssl.base import NoUnlabeledDataWarning
from skssl.model_selection import SemiSupervisedKFold
from skssl.self_training import CurriculumLabelingClassifier
from skssl.self_training._curriculum import _class_weights, _percentile_schedule

# Every fit of a TableClassifier (any clone) appends one record here.
FIT_LOG = []


def _seeds(n, n_fast):
    """Seeds 0 to n - 1 of a property over random problems: the first ``n_fast`` in the fast suite, the rest slow.

    Each seed is a fit with the cross-validated safeguard (three to four fits of the curriculum); the fast suite
    keeps enough of them to catch a broken property, the whole suite runs them all.
    """
    return [seed if seed < n_fast else pytest.param(seed, marks=pytest.mark.slow) for seed in range(n)]


@pytest.fixture(autouse=True)
def _clear_log():
    FIT_LOG.clear()
    yield
    FIT_LOG.clear()


class TableClassifier(ClassifierMixin, BaseEstimator):
    """Classifier whose probabilities are read from a table: ``tables[r][row id]``.

    Column 0 of ``X`` holds the row id. The model made by the ``r``-th fit (counted over
    all clones through ``FIT_LOG``) answers with ``tables[r]``.
    """

    def __init__(self, tables=None, warm_start=False):
        self.tables = tables
        self.warm_start = warm_start

    def fit(self, X, y, sample_weight=None):
        FIT_LOG.append(
            {
                "ids": np.asarray(X[:, 0]).astype(int).ravel().copy(),
                "y": np.asarray(y).copy(),
                "w": None if sample_weight is None else np.asarray(sample_weight).copy(),
                "was_fitted": hasattr(self, "round_"),
                "warm_start": self.warm_start,
            }
        )
        self.round_ = len(FIT_LOG) - 1
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        ids = np.asarray(X[:, 0]).astype(int).ravel()
        return np.asarray(self.tables[min(self.round_, len(self.tables) - 1)])[ids]

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


class PartialFitTable(TableClassifier):
    """A TableClassifier without ``warm_start`` that can only keep training through ``partial_fit``."""

    def __init__(self, tables=None):
        self.tables = tables

    def fit(self, X, y, sample_weight=None):
        self.warm_start = False
        return super().fit(X, y, sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        FIT_LOG.append(
            {
                "ids": np.asarray(X[:, 0]).astype(int),
                "y": np.asarray(y).copy(),
                "partial": True,
                "classes": classes,
                "was_fitted": hasattr(self, "round_"),
            }
        )
        self.round_ = len(FIT_LOG) - 1
        return self


def _rounds_only(*args, **params):
    """The estimator without its safeguard: these tests follow the fits of one curriculum, round by round."""
    params.setdefault("safeguard", None)
    return CurriculumLabelingClassifier(*args, **params)


def _two_class_table(confidence, label):
    """Rows ``i`` get probability ``confidence[i]`` for class ``label[i]``."""
    confidence, label = np.asarray(confidence, float), np.asarray(label)
    table = np.empty((confidence.shape[0], 2))
    table[np.arange(confidence.shape[0]), label] = confidence
    table[np.arange(confidence.shape[0]), 1 - label] = 1 - confidence
    return table


N_LAB, N_UNL = 6, 10
ROW_IDS = np.arange(N_LAB + N_UNL)
X_IDS = np.column_stack([ROW_IDS, np.zeros(N_LAB + N_UNL)]).astype(float)
Y_SEMI = np.array([0, 1, 0, 1, 0, 1] + [-1] * N_UNL)
LAB_LABEL = np.array([0, 1, 0, 1, 0, 1])
# Round-0 confidences of the unlabeled rows 6..15, all distinct, increasing with the row id.
CONF0 = np.array([0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99])
LABEL0 = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1])


def _tables(n_rounds=6):
    base = _two_class_table(np.r_[np.full(N_LAB, 0.99), CONF0], np.r_[LAB_LABEL, LABEL0])
    return [base.copy() for _ in range(n_rounds)]


def test_percentile_schedule():
    assert _percentile_schedule(20) == [80, 60, 40, 20, 0]
    assert _percentile_schedule(30) == [70, 40, 10, 0]
    assert _percentile_schedule(100) == [0]
    assert _percentile_schedule(50.0) == [50, 0]


def test_percentile_thresholds_and_selection_on_hand_made_probabilities():
    clf = _rounds_only(TableClassifier(_tables()), class_weighting=False).fit(X_IDS, Y_SEMI)
    assert clf.n_iter_ == 6 and len(FIT_LOG) == 6
    # linear interpolation of the 10 sorted confidences: position p/100 * 9
    expected_thr = [np.nan]
    for p in (80, 60, 40, 20, 0):
        pos = p / 100 * 9
        lo = int(np.floor(pos))
        hi = min(lo + 1, 9)
        expected_thr.append(CONF0[lo] + (pos - lo) * (CONF0[hi] - CONF0[lo]))
    np.testing.assert_allclose(clf.thresholds_, expected_thr, equal_nan=True)
    # rows at or above the threshold: the 2, 4, 6, 8, 10 most confident
    assert [h["n_pseudo"] for h in clf.history_] == [0, 2, 4, 6, 8, 10]
    assert [h["n_train"] for h in clf.history_] == [6, 8, 10, 12, 14, 16]
    assert [h["percentile"] for h in clf.history_] == [100, 80, 60, 40, 20, 0]
    for t, n in enumerate([0, 2, 4, 6, 8, 10]):
        pseudo_ids = np.arange(N_LAB + N_UNL - n, N_LAB + N_UNL)
        np.testing.assert_array_equal(FIT_LOG[t]["ids"], np.r_[np.arange(N_LAB), pseudo_ids])
        np.testing.assert_array_equal(FIT_LOG[t]["y"], np.r_[LAB_LABEL, LABEL0[N_UNL - n :]])
    np.testing.assert_array_equal(clf.labeled_iter_, [0] * 6 + [5, 5, 4, 4, 3, 3, 2, 2, 1, 1])
    assert clf.best_iter_ == 5


def test_previous_pseudo_labels_may_leave_and_change():
    tables = _tables()
    # The round-1 model loses confidence in row 15 (picked in round 1) and flips row 14's label.
    tables[1][15] = [0.5, 0.5]
    tables[1][14] = [0.03, 0.97]  # LABEL0 of row 14 is 0
    clf = _rounds_only(TableClassifier(tables), class_weighting=False).fit(X_IDS, Y_SEMI)
    round2_ids = FIT_LOG[2]["ids"]
    assert 15 not in round2_ids, "a row picked in round 1 must be able to leave in round 2"
    assert 14 in round2_ids
    assert FIT_LOG[2]["y"][list(round2_ids).index(14)] == 1
    assert FIT_LOG[1]["y"][list(FIT_LOG[1]["ids"]).index(14)] == 0
    assert clf.history_[2]["n_left"] == 1
    assert clf.labeled_iter_[15] == 1  # first pseudo-labeled in round 1, kept despite leaving
    # by percentile 0 every unlabeled row is back in the pool
    assert set(FIT_LOG[-1]["ids"]) == set(ROW_IDS)


def test_each_round_starts_from_fresh_parameters():
    est = TableClassifier(_tables(), warm_start=True)
    _rounds_only(est, class_weighting=False).fit(X_IDS, Y_SEMI)
    assert len(FIT_LOG) == 6
    assert not any(rec["was_fitted"] for rec in FIT_LOG)
    assert not hasattr(est, "round_"), "the user's estimator must never be fitted"


class RecordingSGD(SGDClassifier):
    """SGDClassifier noting, at each fit, whether it already held coefficients."""

    def fit(self, X, y, coef_init=None, intercept_init=None, sample_weight=None):
        FIT_LOG.append({"was_fitted": hasattr(self, "coef_"), "warm_start": self.warm_start})
        return super().fit(X, y, coef_init=coef_init, intercept_init=intercept_init, sample_weight=sample_weight)


@pytest.mark.parametrize("reinitialize", [True, False])
def test_fresh_parameters_with_a_real_warm_start_estimator(reinitialize):
    X, y = make_classification(n_samples=120, n_features=6, random_state=0)
    y_semi = y.copy()
    y_semi[20:] = -1
    est = RecordingSGD(loss="log_loss", warm_start=True, max_iter=5, tol=None, random_state=3)
    clf = _rounds_only(est, reinitialize=reinitialize).fit(X, y_semi)
    assert clf.n_iter_ == 6 and len(FIT_LOG) == 6
    expected = [False] * 6 if reinitialize else [False] + [True] * 5
    assert [rec["was_fitted"] for rec in FIT_LOG] == expected


def test_reinitialize_false_uses_warm_start():
    est = TableClassifier(_tables(), warm_start=False)
    clf = _rounds_only(est, reinitialize=False, class_weighting=False).fit(X_IDS, Y_SEMI)
    assert [rec["was_fitted"] for rec in FIT_LOG] == [False] + [True] * 5
    assert [rec["warm_start"] for rec in FIT_LOG] == [False] + [True] * 5
    assert clf.estimator_.warm_start is True
    assert est.warm_start is False


def test_reinitialize_false_uses_partial_fit_without_warm_start():
    clf = _rounds_only(PartialFitTable(_tables()), reinitialize=False, class_weighting=False)
    clf.fit(X_IDS, Y_SEMI)
    assert "partial" not in FIT_LOG[0]
    assert all(rec.get("partial") for rec in FIT_LOG[1:]) and len(FIT_LOG) == 6
    np.testing.assert_array_equal(FIT_LOG[1]["classes"], [0, 1])


def test_reinitialize_false_without_support_raises():
    with pytest.raises(ValueError, match="warm_start parameter or a partial_fit"):
        CurriculumLabelingClassifier(KNeighborsClassifier(3), reinitialize=False).fit(X_IDS, Y_SEMI)


def test_inverse_frequency_weights_formula():
    y_pool = np.array([0] * 6 + [1] * 3 + [2])
    w = _class_weights(y_pool, "inverse_frequency", np.full(3, 1 / 3))
    # (N - n_k) / n_k / (K - 1) with N = 10: (4/6)/2, (7/3)/2, (9/1)/2
    np.testing.assert_allclose(w, [1 / 3] * 6 + [7 / 6] * 3 + [4.5])
    assert np.isclose(w.mean(), 1.0)
    balanced_pool = np.array([0, 1, 2, 0, 1, 2])
    np.testing.assert_allclose(_class_weights(balanced_pool, "inverse_frequency", np.full(3, 1 / 3)), 1.0)


def test_labeled_prior_weights_formula():
    y_pool = np.array([0] * 6 + [1] * 3 + [2])
    share = np.array([0.2, 0.3, 0.5])
    w = _class_weights(y_pool, "labeled_prior", share)
    # N pi_k / n_k with N = 10: 10 * 0.2 / 6, 10 * 0.3 / 3, 10 * 0.5 / 1
    np.testing.assert_allclose(w, [1 / 3] * 6 + [1.0] * 3 + [5.0])
    assert np.isclose(w.mean(), 1.0)
    # with row weights the products sum to (total weight) * pi_k per class
    row_weight = np.linspace(0.5, 3.0, 10)
    w = _class_weights(y_pool, "labeled_prior", share, row_weight)
    totals = np.bincount(y_pool, weights=row_weight * w)
    np.testing.assert_allclose(totals, row_weight.sum() * share)


@pytest.mark.parametrize("seed", range(40))
def test_labeled_prior_weights_hold_the_labeled_shares(seed):
    """Property over random pools: each class weighs its labeled share, the inverse rule swaps two classes."""
    rng = np.random.RandomState(seed)
    n_classes = rng.randint(2, 6)
    share = rng.dirichlet(np.ones(n_classes))
    y_pool = rng.choice(n_classes, size=rng.randint(20, 300), p=rng.dirichlet(np.full(n_classes, 0.3)))
    y_pool[:n_classes] = np.arange(n_classes)  # the labeled rows keep every class in the pool
    row_weight = None if seed % 2 else rng.uniform(0.1, 3.0, y_pool.shape[0])
    base = np.ones(y_pool.shape[0]) if row_weight is None else row_weight
    w = _class_weights(y_pool, "labeled_prior", share, row_weight)
    assert np.all(w > 0)
    totals = np.bincount(y_pool, weights=base * w, minlength=n_classes)
    np.testing.assert_allclose(totals, base.sum() * share, rtol=1e-10)
    if n_classes == 2:
        counts = np.bincount(y_pool, minlength=2)
        totals = np.bincount(y_pool, weights=_class_weights(y_pool, "inverse_frequency", share), minlength=2)
        np.testing.assert_allclose(totals, counts[::-1])


def test_class_weighting_in_pseudo_rounds_only():
    tables = _tables()
    # make every round pick rows of class 1 mostly so that the pool is unbalanced
    for table in tables:
        table[N_LAB:] = _two_class_table(CONF0, np.ones(N_UNL, int))
    clf = _rounds_only(TableClassifier(tables)).fit(X_IDS, Y_SEMI)
    assert FIT_LOG[0]["w"] is None
    assert [h["class_weighted"] for h in clf.history_] == [False] + [True] * 5
    for rec in FIT_LOG[1:]:
        # the labeled rows are balanced: N / (2 n_k), each class weighing half the pool
        n = rec["y"].shape[0]
        n1 = int(rec["y"].sum())
        expected = np.where(rec["y"] == 1, n / (2 * n1), n / (2 * (n - n1)))
        np.testing.assert_allclose(rec["w"], expected)
    # last pool: 3 of class 0, 13 of class 1
    np.testing.assert_allclose(np.unique(FIT_LOG[-1]["w"]), [16 / 26, 16 / 6])


def test_inverse_frequency_weighting_is_the_reference_rule():
    tables = _tables()
    for table in tables:
        table[N_LAB:] = _two_class_table(CONF0, np.ones(N_UNL, int))
    _rounds_only(TableClassifier(tables), class_weighting="inverse_frequency").fit(X_IDS, Y_SEMI)
    for rec in FIT_LOG[1:]:
        n = rec["y"].shape[0]
        n1 = int(rec["y"].sum())
        expected = np.where(rec["y"] == 1, (n - n1) / n1, n1 / (n - n1))
        np.testing.assert_allclose(rec["w"], expected)
    np.testing.assert_allclose(np.unique(FIT_LOG[-1]["w"]), [3 / 13, 13 / 3])


def test_class_weighting_off_and_user_weights():
    _rounds_only(TableClassifier(_tables()), class_weighting=False).fit(X_IDS, Y_SEMI)
    assert all(rec["w"] is None for rec in FIT_LOG)
    FIT_LOG.clear()
    sw = np.arange(1, N_LAB + N_UNL + 1, dtype=float)
    _rounds_only(TableClassifier(_tables())).fit(X_IDS, Y_SEMI, sample_weight=sw)
    np.testing.assert_allclose(FIT_LOG[0]["w"], sw[:N_LAB])
    # labeled weights: class 0 rows 1 + 3 + 5 = 9, class 1 rows 2 + 4 + 6 = 12
    share = np.array([9.0, 12.0]) / 21.0
    for rec in FIT_LOG[1:]:
        pool_weight = sw[rec["ids"]]
        expected = pool_weight * _class_weights(rec["y"], "labeled_prior", share, pool_weight)
        np.testing.assert_allclose(rec["w"], expected)
        totals = np.bincount(rec["y"], weights=rec["w"], minlength=2)
        np.testing.assert_allclose(totals, pool_weight.sum() * share)


def test_zero_labeled_sample_weight_raises():
    sw = np.r_[np.zeros(N_LAB), np.ones(N_UNL)]
    with pytest.raises(ValueError, match="zero on every labeled training row"):
        CurriculumLabelingClassifier(TableClassifier(_tables())).fit(X_IDS, Y_SEMI, sample_weight=sw)
    assert FIT_LOG == []


@pytest.mark.parametrize("seed", _seeds(24, 8))
def test_imbalanced_problems_keep_the_minority_in_proportion(seed):
    """Property over random imbalanced problems: the default weighting never turns the classes around.

    With the reference's inverse-frequency weights the pseudo rounds gave the minority class the
    majority's weight and predicted it on far more rows than it has (SMS spam: every row).
    """
    rng = np.random.RandomState(seed)
    n_classes = 2 + seed % 2
    minority = rng.uniform(0.04, 0.2)
    weights = [1 - minority * (n_classes - 1)] + [minority] * (n_classes - 1)
    X, y = make_classification(
        n_samples=600,
        n_features=rng.randint(4, 12),
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        weights=weights,
        class_sep=rng.uniform(0.8, 2.0),
        random_state=seed,
    )
    y_semi = np.full_like(y, -1)
    for k in range(n_classes):
        rows = rng.permutation(np.flatnonzero(y == k))
        y_semi[rows[: max(3, int(0.1 * rows.shape[0]))]] = k
    unlabeled = y_semi == -1
    clf = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y_semi)
    supervised = LogisticRegression().fit(X[~unlabeled], y[~unlabeled])
    predicted = clf.predict(X[unlabeled])
    true_share = np.bincount(y[unlabeled], minlength=n_classes)[1:] / unlabeled.sum()
    predicted_share = np.bincount(predicted, minlength=n_classes)[1:] / unlabeled.sum()
    assert np.all(predicted_share <= 2 * true_share + 0.05), (predicted_share, true_share)
    accuracy = np.mean(predicted == y[unlabeled])
    assert accuracy >= np.mean(supervised.predict(X[unlabeled]) == y[unlabeled]) - 0.05


def test_class_weighting_true_needs_sample_weight():
    for weighting in (True, "labeled_prior", "inverse_frequency"):
        with pytest.raises(ValueError, match=f"class_weighting={weighting!r}"):
            CurriculumLabelingClassifier(KNeighborsClassifier(3), class_weighting=weighting).fit(X_IDS, Y_SEMI)
    clf = CurriculumLabelingClassifier(KNeighborsClassifier(3)).fit(X_IDS, Y_SEMI)
    assert not any(h["class_weighted"] for h in clf.history_)
    with pytest.raises(ValueError, match="does not take sample_weight"):
        CurriculumLabelingClassifier(KNeighborsClassifier(3)).fit(X_IDS, Y_SEMI, sample_weight=np.ones(16))


def test_validation_fraction_keeps_best_round():
    X = np.column_stack([np.arange(40), np.zeros(40)]).astype(float)
    y_true = np.arange(40) % 2
    y = np.where(np.arange(40) < 20, y_true, -1)
    good = _two_class_table(np.full(40, 0.9), y_true)
    good[20:] = _two_class_table(np.linspace(0.6, 0.99, 20), y_true[20:])
    bad = good.copy()
    bad[:20] = good[:20, ::-1]
    tables = [bad, bad, good, bad, bad, bad]
    clf = _rounds_only(TableClassifier(tables), validation_fraction=0.5, random_state=0)
    clf.fit(X, y)
    assert [h["validation_score"] for h in clf.history_] == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert clf.best_iter_ == 2 and clf.estimator_.round_ == 2
    # the held-out rows: half of each class, never fitted, never pseudo-labeled
    held_out = set(range(20)) - set(FIT_LOG[0]["ids"])
    assert len(held_out) == 10 and sum(y[list(held_out)]) == 5
    for rec in FIT_LOG:
        assert held_out.isdisjoint(rec["ids"])
    # ties go to the later round
    FIT_LOG.clear()
    clf = _rounds_only(TableClassifier([good] * 6), validation_fraction=0.5, random_state=0)
    assert clf.fit(X, y).best_iter_ == 5


def test_validation_fraction_too_small_raises():
    with pytest.raises(ValueError, match="holds out no labeled row"):
        CurriculumLabelingClassifier(TableClassifier(_tables()), validation_fraction=0.1).fit(X_IDS, Y_SEMI)


def _blobs():
    X, y = make_classification(n_samples=150, n_features=5, n_informative=3, n_redundant=0, n_classes=3, random_state=1)
    y_semi = y.copy()
    y_semi[np.random.RandomState(0).rand(150) < 0.8] = -1
    return X, y, y_semi


def test_determinism():
    X, _, y_semi = _blobs()

    def fit(seed):
        est = SGDClassifier(loss="log_loss", max_iter=20, tol=None)
        return CurriculumLabelingClassifier(est, validation_fraction=0.3, random_state=seed).fit(X, y_semi)

    a, b, c = fit(0), fit(0), fit(1)
    np.testing.assert_array_equal(a.estimator_.coef_, b.estimator_.coef_)
    np.testing.assert_array_equal(a.transduction_, b.transduction_)
    assert a.history_ == b.history_
    assert not np.array_equal(a.estimator_.coef_, c.estimator_.coef_)


@pytest.mark.parametrize("safeguard", ["cross_validation", None])
def test_determinism_with_a_random_estimator_nested_in_a_pipeline(safeguard):
    # A random estimator inside a Pipeline has no random_state of the wrapped estimator's own;
    # the same random_state must still give the same model, and another one another model.
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, _, y_semi = _blobs()

    def fit(seed):
        est = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=5))
        clf = CurriculumLabelingClassifier(est, step=50, safeguard=safeguard, random_state=seed)
        return clf.fit(X, y_semi)

    a, b, c = fit(0), fit(0), fit(1)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.history_ == b.history_
    assert not np.array_equal(a.predict_proba(X), c.predict_proba(X))
    # Each round's clone received a seed, and the user's estimator was left as given.
    assert isinstance(a.estimator_.get_params()["randomforestclassifier__random_state"], int)
    assert a.estimator.get_params()["randomforestclassifier__random_state"] is None


def test_a_nested_random_state_that_is_set_is_kept():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline

    X, _, y_semi = _blobs()
    est = make_pipeline(RandomForestClassifier(n_estimators=5, random_state=7))
    clf = CurriculumLabelingClassifier(est, step=50, safeguard=None, random_state=0).fit(X, y_semi)
    assert clf.estimator_.get_params()["randomforestclassifier__random_state"] == 7
    assert est.get_params()["randomforestclassifier__random_state"] == 7


def test_attributes_and_prediction_methods_with_string_labels():
    X, y, y_semi = _blobs()
    names = np.array(["ant", "bee", "cat"], dtype=object)
    y_obj = np.where(y_semi == -1, -1, names[y]).astype(object)
    y_obj[y_semi == -1] = -1
    clf = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y_obj)
    np.testing.assert_array_equal(clf.classes_, ["ant", "bee", "cat"])
    assert clf.transduction_.shape == (150,)
    np.testing.assert_array_equal(clf.transduction_[y_semi != -1], names[y[y_semi != -1]])
    assert set(clf.predict(X)) <= set(names)
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])
    assert clf.decision_function(X).shape == (150, 3)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba)
    assert clf.labeled_iter_.min() == 0 and np.all(clf.labeled_iter_[y_semi == -1] >= 1)
    assert clf.thresholds_.shape == (6,) and np.isnan(clf.thresholds_[0])
    lab = y_semi != -1
    assert clf.score(X, y_obj) == np.mean(clf.predict(X[lab]) == y_obj[lab])


def test_prediction_methods_follow_the_estimator():
    clf = CurriculumLabelingClassifier(LogisticRegression())
    assert hasattr(clf, "predict_proba") and hasattr(clf, "decision_function")
    clf = CurriculumLabelingClassifier(GaussianNB())
    assert hasattr(clf, "predict_proba") and not hasattr(clf, "decision_function")
    clf = CurriculumLabelingClassifier()
    assert hasattr(clf, "predict_proba") and not hasattr(clf, "decision_function")


def test_estimator_without_predict_proba_raises():
    X, _, y_semi = _blobs()
    with pytest.raises(ValueError, match="predict_proba"):
        CurriculumLabelingClassifier(LinearSVC()).fit(X, y_semi)


def test_no_unlabeled_rows_fits_supervised():
    X, y, _ = _blobs()
    with pytest.warns(NoUnlabeledDataWarning):
        clf = CurriculumLabelingClassifier(LogisticRegression()).fit(X, y)
    assert clf.n_iter_ == 1 and len(clf.history_) == 1
    ref = LogisticRegression().fit(X, y)
    np.testing.assert_allclose(clf.estimator_.coef_, ref.coef_)


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.ones((4, 2)), [-1, -1, -1, -1], "no labeled row"),
        (np.ones((4, 2)), [1, 1, -1, -1], "one class"),
        (np.array([[0.0, np.nan], [1, 1], [2, 2], [3, 3]]), [0, 1, -1, -1], "NaN"),
        (np.array([[0.0, np.inf], [1, 1], [2, 2], [3, 3]]), [0, 1, -1, -1], "infinity"),
        (np.ones((4, 2)), [0, 1, -1], "inconsistent numbers of samples"),
        (np.ones((4, 2)), np.array(["a", "b", "-1", "-1"]), "-1"),
    ],
)
def test_bad_input_raises(X, y, match):
    with pytest.raises(ValueError, match=match):
        CurriculumLabelingClassifier(LogisticRegression()).fit(X, y)


@pytest.mark.parametrize(
    "params",
    [
        {"step": 0},
        {"step": 120},
        {"validation_fraction": 1.0},
        {"validation_fraction": 0.0},
        {"class_weighting": "yes"},
        {"estimator": "lr"},
    ],
)
def test_bad_parameters_raise(params):
    X, _, y_semi = _blobs()
    params.setdefault("estimator", LogisticRegression())
    with pytest.raises(ValueError):
        CurriculumLabelingClassifier(**params).fit(X, y_semi)


def test_inputs_not_mutated_dense_and_sparse():
    X, _, y_semi = _blobs()
    X_copy, y_copy = X.copy(), y_semi.copy()
    sw = np.ones(150)
    CurriculumLabelingClassifier(LogisticRegression(), validation_fraction=0.3, random_state=0).fit(
        X, y_semi, sample_weight=sw
    )
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(y_semi, y_copy)
    np.testing.assert_array_equal(sw, 1.0)
    Xs = sp.csr_matrix(np.abs(X))
    data, indices, indptr = Xs.data.copy(), Xs.indices.copy(), Xs.indptr.copy()
    CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(Xs, y_semi)
    np.testing.assert_array_equal(Xs.data, data)
    np.testing.assert_array_equal(Xs.indices, indices)
    np.testing.assert_array_equal(Xs.indptr, indptr)


def test_sparse_matches_dense_and_sparse_tag_follows_estimator():
    X, y, y_semi = _blobs()
    dense = CurriculumLabelingClassifier(LogisticRegression(tol=1e-10, max_iter=1000), random_state=0)
    sparse = CurriculumLabelingClassifier(LogisticRegression(tol=1e-10, max_iter=1000), random_state=0)
    dense.fit(X, y_semi)
    sparse.fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_array_equal(dense.transduction_, sparse.transduction_)
    np.testing.assert_allclose(dense.predict_proba(X), sparse.predict_proba(sp.csr_matrix(X)), atol=1e-5)
    assert get_tags(CurriculumLabelingClassifier(LogisticRegression())).input_tags.sparse
    assert not get_tags(CurriculumLabelingClassifier(GaussianNB())).input_tags.sparse
    with pytest.raises(TypeError):
        CurriculumLabelingClassifier(GaussianNB()).fit(sp.csr_matrix(X), y_semi)


def test_unlabeled_rows_change_the_model():
    X, y, y_semi = _blobs()
    clf = _rounds_only(LogisticRegression(), random_state=0).fit(X, y_semi)
    sup = LogisticRegression().fit(X[y_semi != -1], y_semi[y_semi != -1])
    assert not np.allclose(clf.estimator_.coef_, sup.coef_)


def test_verbose_prints_one_line_per_round(capsys):
    _rounds_only(TableClassifier(_tables()), verbose=1).fit(X_IDS, Y_SEMI)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "CurriculumLabeling" in ln]
    assert len(lines) == 6 and "percentile 80" in lines[1]


def test_default_estimator_without_torch_names_the_extra(monkeypatch):
    real = importlib.util.find_spec

    def fake_find_spec(name, *args, **kwargs):
        return None if name == "torch" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)
    with pytest.raises(ImportError, match=r"skssl\[deep\]"):
        CurriculumLabelingClassifier().fit(X_IDS, Y_SEMI)


def test_default_estimator_is_the_skssl_net():
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    deep = pytest.importorskip("skssl.deep")
    if not hasattr(deep, "SupervisedNetClassifier"):
        pytest.skip("skssl.deep.SupervisedNetClassifier does not exist yet")
    X, y, y_semi = _blobs()
    # step=50: three fits of the default net (percentiles 50 and 0) instead of six, and no safeguard, whose
    # folds would fit the net three times more; what is tested is the default estimator, which neither changes.
    clf = CurriculumLabelingClassifier(step=50, safeguard=None, random_state=0).fit(X.astype(np.float32), y_semi)
    assert isinstance(clf.estimator_, deep.SupervisedNetClassifier)
    assert clf.n_iter_ == 3
    assert clf.predict_proba(X).shape == (150, 3)


def test_default_net_work_on_a_small_set_is_bounded(monkeypatch):
    # A default curriculum on 60 x 5 rows took 80 s: 24 fits of the default net (6 rounds, then again on each
    # of the safeguard's 3 folds), each 30 epochs of at least 10 steps of 64 rows, i.e. 32 passes per epoch
    # over 20 labeled rows. Count the optimizer steps and the rows each fit had.
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    deep = pytest.importorskip("skssl.deep")
    steps, pools = [0], []
    real_step, real_epoch = deep.SupervisedNetClassifier.train_step, deep.SupervisedNetClassifier._steps_per_epoch

    def counting_step(self, batch, **fit_params):
        steps[0] += 1
        return real_step(self, batch, **fit_params)

    def recording_epoch(self, n_labeled):
        pools.append(n_labeled)
        return real_epoch(self, n_labeled)

    monkeypatch.setattr(deep.SupervisedNetClassifier, "train_step", counting_step)
    monkeypatch.setattr(deep.SupervisedNetClassifier, "_steps_per_epoch", recording_epoch)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = np.full(60, -1)
    y[:20] = np.arange(20) % 2
    # step=50: 3 rounds (12 fits with the safeguard's folds) instead of 6; the length of a fit does not depend on it
    CurriculumLabelingClassifier(step=50, random_state=0).fit(X, y)
    assert len(pools) == 12
    # an epoch draws at most 3 passes over a fit's rows (batches of 64, rounded up to a step), never 10 steps
    assert steps[0] == sum(30 * max(1, -(-3 * n // 64)) for n in pools)
    assert steps[0] <= 12 * 30 * 3 < 12 * 30 * 10


def test_default_steps_per_epoch():
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    from skssl.deep._supervised import default_steps_per_epoch

    assert [default_steps_per_epoch(n, 64) for n in (1, 20, 22, 60, 200, 640, 641)] == [1, 1, 2, 3, 10, 10, 11]


class _NeverFit(LinearSVC):
    """A LinearSVC that fails the test if Curriculum Labeling trains it."""

    def fit(self, X, y, sample_weight=None):
        raise AssertionError("fit must not be reached for an estimator without predict_proba")


def test_estimator_without_predict_proba_raises_before_fitting():
    # Regression: LinearSVC was trained once before "no predict_proba" was reported.
    X, _, y_semi = _blobs()
    with pytest.raises(ValueError, match="no predict_proba"):
        CurriculumLabelingClassifier(_NeverFit()).fit(X, y_semi)
    with pytest.raises(ValueError, match="no predict_proba"):
        CurriculumLabelingClassifier(SGDClassifier(loss="hinge")).fit(X, y_semi)


def test_raw_text_through_a_pipeline():
    # Regression: the meta-estimator validated X itself, so a pipeline starting with a
    # vectorizer could not receive raw text.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    texts = [f"good great fine nice {i}" for i in range(20)] + [f"bad awful poor sad {i}" for i in range(20)]
    y = np.repeat([1, 0], 20)
    y_semi = np.full(40, -1)
    y_semi[[0, 1, 20, 21]] = y[[0, 1, 20, 21]]
    clf = CurriculumLabelingClassifier(make_pipeline(TfidfVectorizer(), LogisticRegression()), random_state=0)
    clf.fit(texts, y_semi)
    assert clf.score(texts, y) == 1.0
    assert clf.predict(["great nice day", "awful sad day"]).tolist() == [1, 0]
    assert not hasattr(clf, "n_features_in_")  # TfidfVectorizer takes no fixed number of columns


def test_the_wrapped_estimator_validates_X():
    X, _, y_semi = _blobs()
    clf = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y_semi)
    assert clf.n_features_in_ == X.shape[1]
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :-1])
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(X_nan)
    np.testing.assert_array_equal(clf.predict(sp.coo_matrix(X)), clf.predict(X))
    assert not hasattr(CurriculumLabelingClassifier(LogisticRegression()), "n_features_in_")


def test_four_dimensional_images_around_the_skssl_image_net():
    # Regression: 4-D image arrays were refused by the meta-estimator's own 2-D validation.
    pytest.importorskip("torch")
    deep = pytest.importorskip("skssl.deep")
    rng = np.random.RandomState(0)
    X = rng.rand(40, 1, 8, 8).astype(np.float32)
    X[20:, :, :4, :] += 1.0  # class 1 has a bright top half
    y = np.repeat([0, 1], 20)
    y_semi = np.full(40, -1)
    y_semi[[0, 1, 2, 20, 21, 22]] = y[[0, 1, 2, 20, 21, 22]]
    net = deep.SupervisedNetClassifier(max_epochs=2, random_state=0)
    clf = CurriculumLabelingClassifier(net, step=50, random_state=0).fit(X, y_semi)
    assert isinstance(clf.estimator_.module_, deep.SmallCNN)
    assert clf.predict_proba(X).shape == (40, 2)
    assert clf.transduction_.shape == (40,)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("n_bad", [1, 3])
def test_non_finite_probabilities_raise(bad, n_bad):
    # One NaN row used to make every percentile NaN: nothing was pseudo-labeled and the fit
    # silently stayed supervised.
    tables = _tables()
    tables[0][N_LAB : N_LAB + n_bad] = [bad, 0.5]
    clf = CurriculumLabelingClassifier(TableClassifier(tables))
    with pytest.raises(ValueError, match=rf"TableClassifier.predict_proba returned non-finite.*{n_bad} of {N_UNL}"):
        clf.fit(X_IDS, Y_SEMI)
    assert len(FIT_LOG) == 1, "the fit must stop at the first round that scores a non-finite probability"


def test_non_finite_probabilities_in_a_later_round_raise():
    tables = _tables()
    tables[2][N_LAB + 4] = [np.nan, np.nan]
    with pytest.raises(ValueError, match=r"1 of 10 unlabeled rows.*round 2"):
        CurriculumLabelingClassifier(TableClassifier(tables)).fit(X_IDS, Y_SEMI)
    assert len(FIT_LOG) == 3


def test_non_finite_probabilities_of_a_real_estimator_raise():
    # A real sklearn estimator whose predict_proba gives one NaN row (as a diverged fit can).
    X, _, y_semi = _blobs()

    class NaNRowGaussianNB(GaussianNB):
        def predict_proba(self, X):
            proba = super().predict_proba(X)
            proba[0] = np.nan
            return proba

    with pytest.raises(ValueError, match="NaNRowGaussianNB.predict_proba returned non-finite.*1 of"):
        CurriculumLabelingClassifier(NaNRowGaussianNB()).fit(X, y_semi)


@pytest.mark.parametrize("sample_weight", [[-1.0] + [1.0] * 15, [1.0] * 15 + [-1e-9]])
def test_negative_sample_weight_raises_without_mutating(sample_weight):
    sw = np.asarray(sample_weight)
    sw_copy = sw.copy()
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        CurriculumLabelingClassifier(TableClassifier(_tables())).fit(X_IDS, Y_SEMI, sample_weight=sw)
    np.testing.assert_array_equal(sw, sw_copy)
    assert FIT_LOG == [], "nothing may be fitted with negative weights"


@pytest.mark.parametrize("sample_weight", [[1e308, 1e308] + [1.0] * 14, [5e-324] * 16])
def test_sample_weight_whose_sum_leaves_float64_is_named(sample_weight):
    # Finite weights whose sum overflows once gave "Input sample_weight contains NaN", which the caller never passed.
    sw = np.asarray(sample_weight)
    with pytest.raises(ValueError, match="sample_weight sums to"):
        CurriculumLabelingClassifier(TableClassifier(_tables())).fit(X_IDS, Y_SEMI, sample_weight=sw)
    assert FIT_LOG == [], "nothing may be fitted with such weights"


def test_sample_weight_is_not_mutated_by_class_weighting():
    # Every unlabeled row is pseudo-labeled 0, so the pools are unbalanced and the class weights differ from 1.
    table = _two_class_table(np.r_[np.full(N_LAB, 0.99), CONF0], np.r_[LAB_LABEL, np.zeros(N_UNL, dtype=int)])
    sw = np.linspace(0.5, 2.0, N_LAB + N_UNL)
    sw_copy = sw.copy()
    _rounds_only(TableClassifier([table])).fit(X_IDS, Y_SEMI, sample_weight=sw)
    np.testing.assert_array_equal(sw, sw_copy)
    np.testing.assert_array_equal(FIT_LOG[0]["w"], sw[:N_LAB])
    assert all(not np.allclose(rec["w"], sw[rec["ids"]]) for rec in FIT_LOG[1:])


# --- metadata routing ----------------------------------------------------------------


class RecordingLogisticRegression(LogisticRegression):
    """LogisticRegression that logs the ``sample_weight`` of every ``fit`` into ``FIT_LOG``."""

    def fit(self, X, y, sample_weight=None):
        FIT_LOG.append({"n": X.shape[0], "w": None if sample_weight is None else np.asarray(sample_weight).copy()})
        return super().fit(X, y, sample_weight=sample_weight)


class MetadataTable(TableClassifier):
    """A TableClassifier whose methods take metadata and log it into ``FIT_LOG``."""

    def fit(self, X, y, sample_weight=None, groups=None, tag=None):
        super().fit(X, y, sample_weight)
        FIT_LOG[-1].update({"groups": None if groups is None else np.asarray(groups).copy(), "tag": tag})
        return self

    def predict(self, X, tag=None):
        FIT_LOG.append({"method": "predict", "tag": tag})
        return self.classes_[super().predict_proba(X).argmax(axis=1)]  # without logging a predict_proba

    def predict_proba(self, X, tag=None):
        FIT_LOG.append({"method": "predict_proba", "tag": tag})
        return super().predict_proba(X)

    def predict_log_proba(self, X, tag=None):
        FIT_LOG.append({"method": "predict_log_proba", "tag": tag})
        return np.log(super().predict_proba(X))

    def decision_function(self, X, tag=None):
        FIT_LOG.append({"method": "decision_function", "tag": tag})
        return super().predict_proba(X)[:, 1] - 0.5


def _fits():
    return [rec for rec in FIT_LOG if "ids" in rec]


def test_routed_sample_weight_reaches_every_round_of_logistic_regression():
    X, _, y_semi = _blobs()
    sw = np.random.RandomState(0).uniform(0.5, 2.0, X.shape[0])
    unrouted = _rounds_only(RecordingLogisticRegression(), random_state=0).fit(X, y_semi, sample_weight=sw)
    expected = [rec["w"] for rec in FIT_LOG]
    FIT_LOG.clear()
    with sklearn.config_context(enable_metadata_routing=True):
        est = RecordingLogisticRegression().set_fit_request(sample_weight=True)
        routed = _rounds_only(est, random_state=0).fit(X, y_semi, sample_weight=sw)
    assert len(FIT_LOG) == routed.n_iter_ == 6
    assert all(rec["w"] is not None and rec["w"].shape == (rec["n"],) for rec in FIT_LOG)
    for got, want in zip([rec["w"] for rec in FIT_LOG], expected):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(routed.estimator_.coef_, unrouted.estimator_.coef_)


def test_routed_sample_weight_matches_the_unrouted_fit_rows_and_validation():
    X = np.column_stack([np.arange(40), np.zeros(40)]).astype(float)
    y = np.where(np.arange(40) < 20, np.arange(40) % 2, -1)
    table = _two_class_table(np.linspace(0.6, 0.99, 40), np.arange(40) % 2)
    sw = np.linspace(0.5, 2.0, 40)
    kw = dict(validation_fraction=0.5, random_state=0)
    unrouted = _rounds_only(TableClassifier([table]), **kw).fit(X, y, sample_weight=sw)
    expected = _fits()
    FIT_LOG.clear()
    with sklearn.config_context(enable_metadata_routing=True):
        est = TableClassifier([table]).set_fit_request(sample_weight=True)
        routed = _rounds_only(est, **kw).fit(X, y, sample_weight=sw)
    assert len(FIT_LOG) == len(expected) == 6
    for got, want in zip(FIT_LOG, expected):
        np.testing.assert_array_equal(got["ids"], want["ids"])
        np.testing.assert_array_equal(got["w"], want["w"])
    assert routed.history_ == unrouted.history_


def test_routed_sample_weight_through_an_alias():
    sw = np.arange(1, N_LAB + N_UNL + 1, dtype=float)
    with sklearn.config_context(enable_metadata_routing=True):
        est = TableClassifier(_tables()).set_fit_request(sample_weight="row_weight")
        _rounds_only(est, class_weighting=False).fit(X_IDS, Y_SEMI, row_weight=sw)
    assert len(FIT_LOG) == 6
    for rec in FIT_LOG:
        np.testing.assert_array_equal(rec["w"], sw[rec["ids"]])


def test_unrequested_sample_weight_raises_with_routing():
    X, _, y_semi = _blobs()
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(UnsetMetadataPassedError, match="sample_weight"):
            CurriculumLabelingClassifier(LogisticRegression()).fit(X, y_semi, sample_weight=np.ones(X.shape[0]))
        # Declined: routed to no object at all.
        est = LogisticRegression().set_fit_request(sample_weight=False)
        with pytest.raises(TypeError, match="not routed to any object"):
            CurriculumLabelingClassifier(est).fit(X, y_semi, sample_weight=np.ones(X.shape[0]))
        # Nothing passed: an estimator that requests nothing fits as without routing.
        routed = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y_semi)
        proba = routed.predict_proba(X)
    plain = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y_semi)
    np.testing.assert_array_equal(proba, plain.predict_proba(X))


def test_fit_params_without_routing_raise():
    clf = CurriculumLabelingClassifier(MetadataTable(_tables()))
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        clf.fit(X_IDS, Y_SEMI, groups=np.arange(16))
    assert _fits() == []
    clf.fit(X_IDS, Y_SEMI)
    for method in ("predict", "predict_proba", "predict_log_proba", "decision_function"):
        with pytest.raises(ValueError, match=f"CurriculumLabelingClassifier.{method} is only supported"):
            getattr(clf, method)(X_IDS, tag="x")


def test_routed_fit_params_are_cut_to_each_round():
    groups = np.arange(100, 116)
    with sklearn.config_context(enable_metadata_routing=True):
        est = MetadataTable(_tables()).set_fit_request(groups=True, tag=True)
        _rounds_only(est, class_weighting=False).fit(X_IDS, Y_SEMI, groups=groups, tag="scalar")
    fits = _fits()  # predict_proba calls are logged too
    assert len(fits) == 6
    for rec in fits:
        np.testing.assert_array_equal(rec["groups"], groups[rec["ids"]])
        assert rec["tag"] == "scalar"
        assert rec["w"] is None


def test_prediction_methods_route_metadata():
    with sklearn.config_context(enable_metadata_routing=True):
        est = (
            MetadataTable(_tables())
            .set_predict_request(tag=True)
            .set_predict_proba_request(tag="proba_tag")
            .set_predict_log_proba_request(tag=True)
            .set_decision_function_request(tag=True)
        )
        clf = CurriculumLabelingClassifier(est).fit(X_IDS, Y_SEMI)
        FIT_LOG.clear()
        clf.predict(X_IDS, tag="p")
        clf.predict_proba(X_IDS, proba_tag="pp")
        clf.predict_log_proba(X_IDS, tag="plp")
        clf.decision_function(X_IDS, tag="df")
        assert [(rec["method"], rec["tag"]) for rec in FIT_LOG] == [
            ("predict", "p"),
            ("predict_proba", "pp"),
            ("predict_log_proba", "plp"),
            ("decision_function", "df"),
        ]
        unrequested = CurriculumLabelingClassifier(MetadataTable(_tables())).fit(X_IDS, Y_SEMI)
        with pytest.raises(UnsetMetadataPassedError, match="tag"):
            unrequested.predict(X_IDS, tag="p")


def test_routed_sample_weight_reaches_partial_fit():
    sw = np.arange(1, N_LAB + N_UNL + 1, dtype=float)

    class WeightedPartialFit(PartialFitTable):
        def partial_fit(self, X, y, classes=None, sample_weight=None):
            super().partial_fit(X, y, classes=classes, sample_weight=sample_weight)
            FIT_LOG[-1]["w"] = None if sample_weight is None else np.asarray(sample_weight).copy()
            return self

    with sklearn.config_context(enable_metadata_routing=True):
        est = WeightedPartialFit(_tables()).set_fit_request(sample_weight=True)
        clf = _rounds_only(est, reinitialize=False, class_weighting=False)
        mapping = str(clf.get_metadata_routing())
        assert "'callee': 'partial_fit'" in mapping
        # partial_fit's own request is needed too
        with pytest.raises(UnsetMetadataPassedError, match="partial_fit"):
            clf.fit(X_IDS, Y_SEMI, sample_weight=sw)
        FIT_LOG.clear()
        est.set_partial_fit_request(sample_weight=True)
        clf.fit(X_IDS, Y_SEMI, sample_weight=sw)
    assert [rec.get("partial", False) for rec in FIT_LOG] == [False] + [True] * 5
    for rec in FIT_LOG:
        np.testing.assert_array_equal(rec["w"], sw[rec["ids"]])
    # Re-initialising rounds call fit only: no partial_fit request is asked for.
    assert "'callee': 'partial_fit'" not in str(_rounds_only(est).get_metadata_routing())


def test_get_metadata_routing_and_nested_routing():
    clf = _rounds_only(LogisticRegression())
    # This meta-estimator routes fit's sample_weight and does not request it itself; score consumes it.
    assert not hasattr(clf, "set_fit_request")
    assert hasattr(clf, "set_score_request")
    X, y, y_semi = _blobs()
    sw = np.random.RandomState(1).uniform(0.5, 2.0, X.shape[0])
    with sklearn.config_context(enable_metadata_routing=True):
        routing = clf.get_metadata_routing()
        assert routing.consumes("fit", ["sample_weight"]) == set()
        est = RecordingLogisticRegression().set_fit_request(sample_weight=True)
        clf = _rounds_only(est, step=50, random_state=0).set_score_request(sample_weight=True)
        assert clf.get_metadata_routing().consumes("fit", ["sample_weight"]) == {"sample_weight"}
        result = cross_validate(clf, X, y_semi, cv=SemiSupervisedKFold(2), params={"sample_weight": sw})
    # 2 folds x 3 rounds, each fit weighted
    assert len(FIT_LOG) == 6 and all(rec["w"] is not None for rec in FIT_LOG)
    assert np.isfinite(result["test_score"]).all()


# --- the cross-validated safeguard ------------------------------------------------------


class FlipsAfterRoundZero(ClassifierMixin, BaseEstimator):
    """LogisticRegression that answers the opposite class once fitted on more than ``honest_rows`` rows.

    Its pseudo-label rounds ruin the curriculum, which the safeguard must see.
    """

    def __init__(self, honest_rows=30):
        self.honest_rows = honest_rows

    def fit(self, X, y, sample_weight=None):
        self.model_ = LogisticRegression().fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.model_.classes_
        self.flip_ = X.shape[0] > self.honest_rows
        return self

    def predict_proba(self, X):
        proba = self.model_.predict_proba(X)
        return proba[:, ::-1] if self.flip_ else proba

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def _two_blobs(seed, n_labeled_per_class=15, n=300):
    X, y = make_classification(
        n_samples=n, n_features=5, n_informative=3, n_redundant=0, class_sep=1.5, random_state=seed
    )
    y_semi = np.full_like(y, -1)
    rng = np.random.RandomState(seed)
    for k in (0, 1):
        y_semi[rng.permutation(np.flatnonzero(y == k))[:n_labeled_per_class]] = k
    return X, y, y_semi


def test_safeguard_returns_the_supervised_model_when_the_rounds_hurt():
    X, y, y_semi = _two_blobs(0)
    clf = CurriculumLabelingClassifier(FlipsAfterRoundZero(), random_state=0).fit(X, y_semi)
    unguarded = CurriculumLabelingClassifier(FlipsAfterRoundZero(), safeguard=None, random_state=0).fit(X, y_semi)
    supervised, curriculum = clf.safeguard_scores_
    assert curriculum < supervised - 0.3
    assert clf.best_iter_ == 0 and unguarded.best_iter_ == 5
    labeled = y_semi != -1
    expected = LogisticRegression().fit(X[labeled], y[labeled]).predict(X)
    np.testing.assert_array_equal(clf.predict(X), expected)
    assert np.mean(clf.predict(X) == y) > 0.7 > 0.4 > np.mean(unguarded.predict(X) == y)
    assert unguarded.safeguard_scores_ is None and unguarded.safeguard_fell_back_ is None
    assert clf.safeguard_fell_back_ is True


@pytest.mark.parametrize("seed", _seeds(30, 10))
def test_safeguard_contract_on_random_problems(seed):
    """Property: the safeguard returns the curriculum's model or round 0's, as its two scores say."""
    rng = np.random.RandomState(seed)
    X, y, y_semi = _two_blobs(seed, n_labeled_per_class=rng.randint(2, 12), n=rng.randint(60, 200))
    est = LogisticRegression(C=rng.choice([0.01, 1.0, 100.0]))
    clf = CurriculumLabelingClassifier(est, random_state=seed).fit(X, y_semi)
    unguarded = CurriculumLabelingClassifier(est, safeguard=None, random_state=seed).fit(X, y_semi)
    scores = clf.safeguard_scores_
    assert scores.shape == (2,) and np.all((scores >= 0) & (scores <= 1))
    labeled = y_semi != -1
    assert clf.safeguard_fell_back_ is bool(scores[1] < scores[0])
    if scores[1] < scores[0]:
        assert clf.best_iter_ == 0
        np.testing.assert_array_equal(clf.predict(X), clone(est).fit(X[labeled], y[labeled]).predict(X))
    else:
        assert clf.best_iter_ == unguarded.best_iter_ == 5
        np.testing.assert_array_equal(clf.predict(X), unguarded.predict(X))
    np.testing.assert_array_equal(clf.transduction_[labeled], y_semi[labeled])
    again = CurriculumLabelingClassifier(est, random_state=seed).fit(X, y_semi)
    np.testing.assert_array_equal(again.safeguard_scores_, scores)


def test_safeguard_folds_hold_out_labeled_rows():
    """Each fold's curriculum never sees its held-out labeled rows; the held-out parts cover the labeled rows."""
    clf = CurriculumLabelingClassifier(TableClassifier(_tables()), random_state=0).fit(X_IDS, Y_SEMI)
    assert clf.safeguard_scores_ is not None
    main, inner = FIT_LOG[:6], FIT_LOG[6:]
    assert len(inner) == 3 * 6  # 3 folds (3 labeled rows per class) of 6 rounds
    held_out = []
    for fold in range(3):
        seen = np.unique(np.concatenate([rec["ids"] for rec in inner[6 * fold : 6 * fold + 6]]))
        missing = np.setdiff1d(ROW_IDS, seen)
        assert np.all(Y_SEMI[missing] != -1) and missing.shape[0] == 2
        held_out.append(missing)
    np.testing.assert_array_equal(np.sort(np.concatenate(held_out)), np.flatnonzero(Y_SEMI != -1))
    assert np.unique(np.concatenate([rec["ids"] for rec in main])).shape[0] == N_LAB + N_UNL


def test_safeguard_does_not_act_without_enough_labels_or_unlabeled_rows():
    X, y, _ = _two_blobs(1, n=40)
    y_semi = np.full_like(y, -1)
    y_semi[np.flatnonzero(y == 0)[:1]] = 0
    y_semi[np.flatnonzero(y == 1)[:1]] = 1
    clf = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y_semi)
    assert clf.safeguard_scores_ is None and clf.best_iter_ == 5
    with pytest.warns(NoUnlabeledDataWarning):
        clf = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y)
    assert clf.safeguard_scores_ is None and clf.n_iter_ == 1
    assert not hasattr(clf, "_round0_estimator")


def test_safeguard_verbose_line(capsys):
    X, y, y_semi = _two_blobs(0)
    CurriculumLabelingClassifier(FlipsAfterRoundZero(), verbose=1, random_state=0).fit(X, y_semi)
    out = capsys.readouterr().out.splitlines()
    rounds = [line for line in out if line.startswith("[CurriculumLabeling] round ")]
    folds = [line.split(":")[0] for line in out if line.startswith("[CurriculumLabeling] safeguard fold")]
    assert [line.split(":")[0] for line in rounds] == [f"[CurriculumLabeling] round {t}/5" for t in range(6)]
    # the safeguard's folds, which cost most of the fit, report their progress too
    assert folds == [f"[CurriculumLabeling] safeguard fold {k}/{len(folds)}" for k in range(1, len(folds) + 1)]
    assert len(folds) >= 2 and len(out) == 6 + len(folds) + 1
    assert out[-1].startswith("[CurriculumLabeling] safeguard: cross-validated accuracy")
    assert out[-1].endswith("kept the supervised model of round 0")


@pytest.mark.parametrize("seed", _seeds(5, 2))
def test_safeguard_verdict_does_not_depend_on_random_state(seed):
    """With a deterministic estimator and random_state=None, every fit gives the same model and scores."""
    X, _, y_semi = _two_blobs(seed, n_labeled_per_class=6, n=120)
    fits = [CurriculumLabelingClassifier(LogisticRegression()).fit(X, y_semi) for _ in range(3)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.safeguard_scores_, fits[0].safeguard_scores_)
        np.testing.assert_array_equal(other.predict(X), fits[0].predict(X))


@pytest.mark.parametrize("n_classes", [2, 3, 4, 5, 8])
def test_one_labeled_row_per_class_fits_and_the_safeguard_stands_aside(n_classes):
    # With 4 classes or more, StratifiedKFold raised: no class had a row for each of its 2 folds.
    X = np.random.RandomState(n_classes).randn(10 * n_classes, 2)
    y = np.full(X.shape[0], -1)
    y[:n_classes] = np.arange(n_classes)
    clf = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y)
    assert clf.safeguard_scores_ is None and clf.safeguard_fell_back_ is None
    np.testing.assert_array_equal(clf.classes_, np.arange(n_classes))


def test_the_safeguard_runs_with_a_validation_fraction_its_folds_are_too_small_for():
    # Ten labels per class: validation_fraction=0.1 holds out one row of each in the full fit; the safeguard's
    # folds train on two thirds of the labels, where it would hold out none, and fit without validation.
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
    y_semi = np.full_like(y, -1)
    for k in range(3):
        y_semi[np.flatnonzero(y == k)[:10]] = k
    clf = CurriculumLabelingClassifier(LogisticRegression(), validation_fraction=0.1, random_state=0)
    clf.fit(X, y_semi)
    assert clf.safeguard_scores_ is not None and all(h["validation_score"] is not None for h in clf.history_)
    # where the folds are large enough they keep validating: 30 labels per class, two thirds of 30 is 20
    for k in range(3):
        y_semi[np.flatnonzero(y == k)[:30]] = k
    inner_fractions = []
    fit = CurriculumLabelingClassifier.fit

    def spy(self, *args, **kwargs):
        inner_fractions.append(self.validation_fraction)
        return fit(self, *args, **kwargs)

    CurriculumLabelingClassifier.fit = spy
    try:
        CurriculumLabelingClassifier(LogisticRegression(), validation_fraction=0.1, random_state=0).fit(X, y_semi)
    finally:
        CurriculumLabelingClassifier.fit = fit
    assert inner_fractions == [0.1] * 4


@pytest.mark.parametrize("seed", range(30))
def test_validation_rows_are_drawn_among_rows_of_positive_weight(seed):
    # A labeled row of weight 0 counts as absent: drawn into the validation rows it could leave them no weight
    # (accuracy_score raised, depending on random_state). The split, and the model, are those without the rows.
    rng = np.random.RandomState(seed)
    X = rng.randn(80, 2)
    y_true = (X[:, 0] + 0.3 * rng.randn(80) > 0).astype(int)
    labeled = np.r_[np.flatnonzero(y_true == 0)[:6], np.flatnonzero(y_true == 1)[:6]]
    y = np.full(80, -1)
    y[labeled] = y_true[labeled]
    weight = np.ones(80)
    zero = rng.choice(labeled, rng.randint(1, 9), replace=False)
    weight[zero] = 0.0
    for k in (0, 1):  # keep two rows of positive weight per class: one to validate, one to train
        rows = labeled[y[labeled] == k]
        weight[rows[:2]] = 1.0
    params = dict(validation_fraction=0.5, safeguard=None, random_state=seed)
    clf = CurriculumLabelingClassifier(LogisticRegression(), **params).fit(X, y, sample_weight=weight)
    assert all(h["validation_score"] is not None for h in clf.history_)
    kept = weight > 0
    without = CurriculumLabelingClassifier(LogisticRegression(), **params).fit(X[kept], y[kept])
    assert [h["validation_score"] for h in clf.history_] == [h["validation_score"] for h in without.history_]
    np.testing.assert_array_equal(clf.predict(X), without.predict(X))


def test_a_scalar_sample_weight_reaches_the_safeguards_folds():
    X, y, y_semi = _two_blobs(0)
    scalar = CurriculumLabelingClassifier(LogisticRegression(), random_state=0).fit(X, y_semi, sample_weight=2.0)
    full = CurriculumLabelingClassifier(LogisticRegression(), random_state=0)
    full.fit(X, y_semi, sample_weight=np.full(X.shape[0], 2.0))
    assert scalar.safeguard_scores_ is not None
    np.testing.assert_array_equal(scalar.safeguard_scores_, full.safeguard_scores_)
    np.testing.assert_array_equal(scalar.predict(X), full.predict(X))


class _WarnsInFit(LogisticRegression):
    """LogisticRegression that also says something else in every fit."""

    def fit(self, X, y, sample_weight=None):
        warnings.warn("a note from the estimator", UserWarning, stacklevel=2)
        return super().fit(X, y, sample_weight=sample_weight)


def _unscaled_problem():
    # features of very different scales: lbfgs stops at max_iter in every fit
    X, y = make_classification(300, n_features=6, n_informative=4, random_state=0)
    X = X * np.logspace(0, 4, 6)
    y_semi = np.where(np.random.RandomState(0).rand(300) < 0.7, -1, y)
    return X, y_semi


def test_convergence_warnings_are_collected_into_one():
    X, y_semi = _unscaled_problem()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = CurriculumLabelingClassifier(_WarnsInFit(max_iter=5), random_state=0).fit(X, y_semi)
    n_fits = clf.n_iter_ * (1 + 3)  # the rounds, then the curriculum again on each of the safeguard's 3 folds
    converge = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(converge) == 1
    message = str(converge[0].message)
    assert f"{n_fits} of the {n_fits} fits of _WarnsInFit inside CurriculumLabelingClassifier.fit" in message
    assert "Scale X" in message and "max_iter" in message
    assert converge[0].filename == __file__  # at the user's line
    # other warnings are not swallowed
    assert sum(str(w.message) == "a note from the estimator" for w in caught) == n_fits


def test_converged_fits_give_no_convergence_warning():
    X, y_semi = _unscaled_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        CurriculumLabelingClassifier(make_pipeline(StandardScaler(), LogisticRegression()), random_state=0).fit(
            X, y_semi
        )

"""Tests of SemiSupervisedKFold and labeled_scorer, on real data with sklearn's
own SelfTrainingClassifier."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    KFold,
    RepeatedStratifiedKFold,
    cross_val_score,
    cross_validate,
    train_test_split,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier
from threadpoolctl import threadpool_limits

from skssl.base import UnlabeledAsClassWarning
from skssl.datasets import make_semi_supervised
from skssl.model_selection import SemiSupervisedKFold, labeled_scorer
from skssl.self_training import LabeledOnlyClassifier


def _self_training():
    return make_pipeline(StandardScaler(), SelfTrainingClassifier(LogisticRegression(max_iter=2000)))


@pytest.fixture(scope="module")
def cancer_split():
    """Real data, 80% of the training labels hidden, a labeled held-out set."""
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    y_semi = make_semi_supervised(y_train, 0.2, random_state=0)
    return X_train, y_semi, X_test, y_test


def test_splits_keep_unlabeled_rows_in_training_and_out_of_tests():
    y = np.array([0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, 1])
    unlabeled = set(np.flatnonzero(y == -1))
    tests = []
    for train, test in SemiSupervisedKFold(cv=3).split(np.zeros((12, 2)), y):
        assert unlabeled <= set(train)
        assert not unlabeled & set(test)
        assert not set(train) & set(test)
        assert np.all(np.diff(train) > 0)
        tests.extend(test)
    assert sorted(tests) == sorted(np.flatnonzero(y != -1))


def test_inner_cv_is_stratified_over_labeled_classes():
    y = np.array([0] * 10 + [1] * 5 + [-1] * 30)
    for _, test in SemiSupervisedKFold(cv=5).split(np.zeros((45, 1)), y):
        assert np.bincount(y[test]).tolist() == [2, 1]


@pytest.mark.parametrize(
    "inner", [KFold(3), RepeatedStratifiedKFold(n_splits=2, n_repeats=2, random_state=0), GroupKFold(2)]
)
def test_any_sklearn_splitter_works(inner):
    y = np.array([0, 1] * 6 + [-1] * 4)
    groups = np.arange(16) % 4
    cv = SemiSupervisedKFold(cv=inner)
    splits = list(cv.split(np.zeros((16, 1)), y, groups))
    assert len(splits) == cv.get_n_splits(np.zeros((16, 1)), y, groups)
    for train, test in splits:
        assert set(range(12, 16)) <= set(train)
        assert np.all(y[test] != -1)


def test_string_labels_mixed_with_minus_one():
    y = np.array(["a", "b", -1, "a", "b", -1, "a", "b"], dtype=object)
    splits = list(SemiSupervisedKFold(cv=2).split(np.zeros((8, 1)), y))
    assert len(splits) == 2
    assert all({2, 5} <= set(train) for train, _ in splits)


@pytest.mark.parametrize("scoring", [None, labeled_scorer("accuracy")])
def test_scores_of_an_object_y_of_integers_or_booleans_are_not_nan(scoring):
    # Such a y (a pandas column of dtype object, or booleans, which numpy mixes with -1 only as objects) fits;
    # its scores were NaN in cross_val_score and GridSearchCV, with only a warning. (scikit-learn's named
    # scorers cannot read it, which README's "-1 convention" says.)
    rng = np.random.RandomState(0)
    X = rng.randn(60, 2)
    truth = X[:, 0] > 0
    for labels in (truth.astype(int), truth):
        y = np.array([-1 if i % 3 == 0 else v for i, v in enumerate(labels.tolist())], dtype=object)
        scores = cross_val_score(LabeledOnlyClassifier(LogisticRegression()), X, y, cv=SemiSupervisedKFold(3),
                                 scoring=scoring, error_score="raise")  # fmt: skip
        assert np.all(scores > 0.8)


def test_split_errors():
    with pytest.raises(ValueError, match="needs y"):
        next(SemiSupervisedKFold().split(np.zeros((3, 1)), None))
    with pytest.raises(ValueError, match="no labeled row"):
        next(SemiSupervisedKFold().split(np.zeros((3, 1)), [-1, -1, -1]))
    with pytest.raises(ValueError, match="3 rows but y has 2"):
        next(SemiSupervisedKFold().split(np.zeros((3, 1)), [0, 1]))


def test_folds_given_as_an_iterable_are_positions_among_the_labeled_rows():
    y = np.array([0, 1, -1, -1, 0, 1, -1, -1, 0, 1, -1, -1])
    X = np.zeros((12, 1))
    labeled, unlabeled = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    folds = [(np.array([0, 1, 4, 5]), np.array([2, 3])), (np.array([True] * 4 + [False] * 2), np.array([4, 5]))]
    (train0, test0), (train1, test1) = SemiSupervisedKFold(cv=folds).split(X, y)
    np.testing.assert_array_equal(test0, labeled[[2, 3]])
    np.testing.assert_array_equal(train0, np.sort(np.r_[labeled[[0, 1, 4, 5]], unlabeled]))
    np.testing.assert_array_equal(test1, labeled[[4, 5]])
    np.testing.assert_array_equal(train1, np.sort(np.r_[labeled[:4], unlabeled]))


@pytest.mark.parametrize(
    "fold",
    [
        (np.array([0, 1, 4, 5]), np.array([8, 9])),  # rows of X, past the 6 labeled rows: once an IndexError
        (np.array([0, 1]), np.array([-1])),  # numpy wrapped it to the last labeled row
        (np.array([0.0, 1.0]), np.array([2.0])),
        (np.ones(12, dtype=bool), np.zeros(12, dtype=bool)),  # a mask over the rows of X
    ],
)
def test_folds_out_of_the_labeled_rows_raise_a_clear_error(fold):
    y = np.array([0, 1, -1, -1, 0, 1, -1, -1, 0, 1, -1, -1])
    with pytest.raises(ValueError, match="labeled rows"):
        list(SemiSupervisedKFold(cv=[fold]).split(np.zeros((12, 1)), y))


def test_labeled_scorer_drops_unlabeled_rows_and_their_weights():
    X = np.array([[0.0], [1.0], [0.2], [0.8], [0.5]])
    clf = LogisticRegression().fit(X[:4], [0, 1, 0, 1])
    y = np.array([0, 1, -1, 0, -1])
    expected = np.mean(clf.predict(X[[0, 1, 3]]) == y[[0, 1, 3]])
    assert labeled_scorer("accuracy")(clf, X, y) == pytest.approx(expected)
    weights = np.array([1.0, 1.0, 5.0, 3.0, 7.0])
    expected_w = np.average(clf.predict(X[[0, 1, 3]]) == y[[0, 1, 3]], weights=[1, 1, 3])
    assert labeled_scorer("accuracy")(clf, X, y, sample_weight=weights) == pytest.approx(expected_w)
    assert labeled_scorer(None, estimator=clf)(clf, X, y) == pytest.approx(expected)
    with pytest.raises(ValueError, match="pass estimator"):
        labeled_scorer(None)
    assert repr(labeled_scorer("f1")) == "labeled_scorer('f1')"


def test_plain_cv_is_wrong_and_semi_supervised_kfold_is_right(cancer_split):
    """The figures of the issue: CV accuracy against held-out accuracy (80% unlabeled)."""
    X_train, y_semi, X_test, y_test = cancer_split
    held_out = _self_training().fit(X_train, y_semi).score(X_test, y_test)
    plain = cross_val_score(_self_training(), X_train, y_semi, cv=5).mean()
    ours = cross_val_score(_self_training(), X_train, y_semi, cv=SemiSupervisedKFold(5)).mean()
    scorer_only = cross_val_score(_self_training(), X_train, y_semi, cv=5, scoring=labeled_scorer("accuracy"))
    print(f"held-out {held_out:.3f}  plain CV {plain:.3f}  SemiSupervisedKFold {ours:.3f}")
    assert held_out > 0.9
    assert plain < 0.5  # the -1 rows are counted as errors
    assert abs(ours - held_out) < 0.05
    assert abs(scorer_only.mean() - held_out) < 0.05


def test_f1_is_nan_with_plain_cv_and_finite_with_ours(cancer_split):
    X_train, y_semi, _, _ = cancer_split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns that scoring failed
        plain = cross_val_score(_self_training(), X_train, y_semi, cv=5, scoring="f1")
    assert np.isnan(plain).all()
    result = cross_validate(_self_training(), X_train, y_semi, cv=SemiSupervisedKFold(5), scoring=["f1", "accuracy"])
    assert np.isfinite(result["test_f1"]).all() and result["test_f1"].mean() > 0.9
    wrapped = cross_val_score(_self_training(), X_train, y_semi, cv=5, scoring=labeled_scorer("f1"))
    assert np.isfinite(wrapped).all()


def test_grid_search_on_real_multiclass_data():
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    y_semi = make_semi_supervised(y_train, 0.2, random_state=1)
    search = GridSearchCV(
        _self_training(),
        {"selftrainingclassifier__threshold": [0.75, 0.95]},
        cv=SemiSupervisedKFold(3),
        scoring="f1_macro",
    )
    # One BLAS thread: on 1,257 x 64 rows extra threads only spin (measured on a busy 2-core
    # machine: 12.1 s CPU with the default threads, 3.3 s with one).
    with threadpool_limits(1):
        search.fit(X_train, y_semi)
    held_out = search.score(X_test, y_test)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert abs(search.best_score_ - held_out) < 0.06


def test_coo_input_to_split_and_labeled_scorer():
    # Regression: both failed with "'coo_matrix' object is not subscriptable" (sklearn's CV
    # code runs X through `indexable` first, which turns COO into CSR).
    sp = pytest.importorskip("scipy.sparse")
    X, y = load_breast_cancer(return_X_y=True)
    y_semi = make_semi_supervised(y, 0.3, random_state=0)
    X_coo = sp.coo_matrix(X)
    cv = SemiSupervisedKFold(3)
    for (train_a, test_a), (train_b, test_b) in zip(cv.split(X_coo, y_semi), cv.split(X, y_semi)):
        np.testing.assert_array_equal(train_a, train_b)
        np.testing.assert_array_equal(test_a, test_b)
    clf = LogisticRegression(max_iter=5000).fit(X[y_semi != -1], y_semi[y_semi != -1])
    scorer = labeled_scorer("accuracy")
    assert scorer(clf, X_coo, y_semi) == scorer(clf, X, y_semi)


def test_plain_list_with_strings_and_minus_one():
    # Regression: a plain list ["spam", -1, ...] became a string array holding "-1" and was rejected.
    X = np.arange(12, dtype=float).reshape(6, 2)
    y = ["spam", -1, "ham", "spam", -1, "ham"]
    splits = list(SemiSupervisedKFold(2).split(X, y))
    assert all(1 in train and 4 in train and 1 not in test and 4 not in test for train, test in splits)
    clf = LogisticRegression().fit(X[[0, 2, 3, 5]], ["spam", "ham", "spam", "ham"])
    assert 0 <= labeled_scorer("accuracy")(clf, X, y) <= 1


@pytest.fixture
def warning_not_yet_shown(monkeypatch):
    """The UnlabeledAsClassWarning is shown once per process; each test starts before that."""
    import skssl.model_selection

    monkeypatch.setattr(skssl.model_selection, "_unlabeled_class_warned", False)


def _plain_and_baseline():
    plain = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    baseline = make_pipeline(StandardScaler(), LabeledOnlyClassifier(LogisticRegression(max_iter=1000)))
    return plain, baseline


def test_labeled_scorer_warns_once_when_a_plain_classifier_learned_minus_one(warning_not_yet_shown):
    """The issue's reproducer: digits, a plain pipeline under SemiSupervisedKFold scores about 0.06."""
    X, y = load_digits(return_X_y=True)
    y_semi = make_semi_supervised(y, 0.2, random_state=0)
    plain, baseline = _plain_and_baseline()
    scorer = labeled_scorer("accuracy")
    with threadpool_limits(1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrong = cross_val_score(plain, X, y_semi, cv=SemiSupervisedKFold(3), scoring=scorer).mean()
        again = scorer(plain.fit(X, y_semi), X, y_semi)  # later calls stay silent
    ours = [w for w in caught if issubclass(w.category, UnlabeledAsClassWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    message = str(ours[0].message)
    assert "LogisticRegression" in message and "Pipeline" in message and "-1" in message
    assert "LabeledOnlyClassifier" in message
    assert wrong < 0.2 and again < 0.2  # the score itself is still returned
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error", UnlabeledAsClassWarning)
        fair = cross_val_score(baseline, X, y_semi, cv=SemiSupervisedKFold(3), scoring=scorer).mean()
    assert fair > 0.9


def test_no_unlabeled_class_warning_for_models_without_minus_one(warning_not_yet_shown):
    X, y = load_breast_cancer(return_X_y=True)
    y_semi = make_semi_supervised(y, 0.3, random_state=0)
    labeled = y_semi != -1
    scorer = labeled_scorer("accuracy")
    with threadpool_limits(1):
        fitted = [
            make_pipeline(StandardScaler(), LabeledOnlyClassifier(LogisticRegression())).fit(X, y_semi),
            LabeledOnlyClassifier(make_pipeline(StandardScaler(), LogisticRegression())).fit(X, y_semi),
            _self_training().fit(X, y_semi),
            make_pipeline(StandardScaler(), LogisticRegression()).fit(X[labeled], y_semi[labeled]),
        ]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error", UnlabeledAsClassWarning)
        for est in fitted:
            assert scorer(est, X, y_semi) > 0.8


@pytest.mark.parametrize(
    "labels",
    [
        np.array([0, 1, -1, -1, 0, 1]),  # a bare classifier, integer labels
        np.array([0.0, 2.0, -1.0, -1.0, 0.0, 2.0]),  # float labels
    ],
)
def test_unlabeled_class_warning_for_bare_classifiers(labels, warning_not_yet_shown):
    X = np.arange(6.0).reshape(-1, 1)
    clf = LogisticRegression().fit(X, labels)
    with pytest.warns(UnlabeledAsClassWarning, match=r"^LogisticRegression was fitted with -1"):
        labeled_scorer("accuracy")(clf, X, labels)


def test_unlabeled_marker_detection():
    from skssl.model_selection import _holds_unlabeled_marker

    assert _holds_unlabeled_marker(np.array([-1, 0, 1]))
    assert _holds_unlabeled_marker(np.array([-1.0, 3.0]))
    assert _holds_unlabeled_marker(np.array([-1, "a"], dtype=object))
    assert _holds_unlabeled_marker([np.array([0, 1]), np.array([-1, 2])])  # multi-output
    assert not _holds_unlabeled_marker(np.array([-2, 0, 1]))
    assert not _holds_unlabeled_marker(np.array(["-1", "a"]))  # a string is not the marker
    assert not _holds_unlabeled_marker(np.array([True, False]))
    assert not _holds_unlabeled_marker(np.array(["a", 1], dtype=object))

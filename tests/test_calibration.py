"""Tests of skssl.calibration.SemiSupervisedCalibratedClassifierCV and of the meta-estimator warning."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.calibration import CalibratedClassifierCV, _sigmoid_calibration
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import LinearSVC

from skssl.base import NoUnlabeledDataWarning
from skssl.calibration import SemiSupervisedCalibratedClassifierCV, _SigmoidCalibrator
from skssl.datasets import make_semi_supervised
from skssl.model_selection import SemiSupervisedKFold
from skssl.self_training import LabeledOnlyClassifier
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC


def _tsvm():
    return TransductiveSVC(safeguard=None)  # one fit per fold: the safeguard's own cross-validation is not tested here


def _stripes(seed, n=150, gap=1.0):
    """Two classes elongated along the second feature, separated by a low-density gap along the first."""
    rng = np.random.RandomState(seed)
    X = np.vstack([rng.randn(n, 2) * [0.5, 3] + [-gap, 0], rng.randn(n, 2) * [0.5, 3] + [gap, 0]])
    return X, np.repeat([0, 1], n)


def _skewed(seed, n0=200, n1=30, shift=1.2):
    """An unbalanced pair of overlapping blobs, and (from the seed's draw) 8 labeled rows of each class.

    The labels are balanced where the rows are not: the TSVM takes its class fraction from the labeled rows
    and pushes half of the unlabeled rows into the small class, so it is worse than the supervised l2-SVM.
    """
    rng = np.random.RandomState(seed)
    X = np.vstack([rng.randn(n0, 2) + [-shift, 0], rng.randn(n1, 2) + [shift, 0]])
    y = np.repeat([0, 1], [n0, n1])
    y_semi = np.full_like(y, -1)
    for k in (0, 1):
        y_semi[rng.choice(np.flatnonzero(y == k), 8, replace=False)] = k
    return X, y, y_semi


def _blobs(n_classes=3, seed=0):
    X, y = make_blobs(150, centers=n_classes, n_features=4, cluster_std=1.5, random_state=seed)
    return X - X.min() + 0.1, y, make_semi_supervised(y, 8, per_class=True, random_state=seed)


@pytest.mark.parametrize(
    "estimator, method, ensemble",
    [
        (_tsvm(), "sigmoid", True),
        (_tsvm(), "isotonic", True),
        (_tsvm(), "sigmoid", False),
        (_tsvm(), "isotonic", False),
        (DeterministicAnnealingSVC(safeguard=None), "sigmoid", True),
        (PottsDeterministicAnnealingSVC(safeguard=None), "sigmoid", False),
    ],
)
def test_probabilities_shape_classes_and_sum(estimator, method, ensemble):
    X, _, y_semi = _blobs()
    clf = SemiSupervisedCalibratedClassifierCV(estimator, method=method, cv=3, ensemble=ensemble).fit(X, y_semi)
    assert clf.classes_.tolist() == [0, 1, 2]
    proba = clf.predict_proba(X)
    assert proba.shape == (X.shape[0], 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (proba >= 0).all() and (proba <= 1).all()
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])
    assert len(clf.calibrated_classifiers_) == (3 if ensemble else 1)
    assert clf.transduction_.shape == y_semi.shape
    np.testing.assert_array_equal(clf.transduction_[y_semi != -1], y_semi[y_semi != -1])


def test_binary_and_string_labels_never_hold_minus_one():
    X, y = _stripes(0, n=40)
    y_semi = make_semi_supervised(y, 6, per_class=True, random_state=0)
    names = np.array(["ham", "spam"], dtype=object)[y]
    y_str = np.where(y_semi == -1, -1, names).astype(object)
    clf = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_str)
    assert clf.classes_.tolist() == ["ham", "spam"]
    assert -1 not in clf.classes_.tolist() and "-1" not in clf.classes_.tolist()
    proba = clf.predict_proba(X)
    assert proba.shape == (X.shape[0], 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= {"ham", "spam"}
    assert (clf.predict(X) == names).mean() > 0.9


def test_brier_no_worse_than_labeled_only_calibration():
    """Where the unlabeled rows show the gap, the wrapper's probabilities beat a calibrated LinearSVC on the labels."""
    X, y = _stripes(2)
    X_test, y_test = _stripes(102)
    y_semi = make_semi_supervised(y, 10, per_class=True, random_state=2)
    ours = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi)
    labeled = y_semi != -1
    baseline = CalibratedClassifierCV(LinearSVC(), cv=3).fit(X[labeled], y_semi[labeled])
    ours_brier = brier_score_loss(y_test, ours.predict_proba(X_test)[:, 1])
    baseline_brier = brier_score_loss(y_test, baseline.predict_proba(X_test)[:, 1])
    assert ours_brier <= baseline_brier
    assert ours.score(X_test, y_test) >= baseline.score(X_test, y_test)


def test_brier_no_worse_than_labeled_only_calibration_where_the_s3vm_is_worse():
    """Where the S3VM is worse than the supervised model, the wrapper falls back to the calibrated supervised one."""
    X, y, y_semi = _skewed(0)
    X_test, y_test, _ = _skewed(100)
    labeled = y_semi != -1
    s3vm = _tsvm().fit(X, y_semi)
    supervised = LinearL2SVC().fit(X[labeled], y_semi[labeled])
    assert s3vm.score(X_test, y_test) < supervised.score(X_test, y_test) - 0.1  # the premise of the test
    baseline = CalibratedClassifierCV(LinearSVC(), cv=3).fit(X[labeled], y_semi[labeled])
    baseline_brier = brier_score_loss(y_test, baseline.predict_proba(X_test)[:, 1])
    ours = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi)
    assert brier_score_loss(y_test, ours.predict_proba(X_test)[:, 1]) <= baseline_brier
    assert ours.fell_back_
    assert ours.fallback_scores_[0] < ours.fallback_scores_[1]
    assert isinstance(ours.calibrated_classifiers_[0].estimator, LinearL2SVC)
    # Without the check the calibrated S3VM is worse than the baseline here.
    unchecked = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3, fallback=None).fit(X, y_semi)
    assert unchecked.fell_back_ is None and unchecked.fallback_scores_ is None
    assert brier_score_loss(y_test, unchecked.predict_proba(X_test)[:, 1]) > baseline_brier


def test_fallback_keeps_the_s3vm_where_the_held_out_labels_prefer_it():
    X, y = _stripes(2)
    y_semi = make_semi_supervised(y, 10, per_class=True, random_state=2)
    clf = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi)
    assert clf.fell_back_ is False and clf.fallback_scores_.shape == (2,)
    assert isinstance(clf.calibrated_classifiers_[0].estimator, TransductiveSVC)
    plain = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3, fallback=None).fit(X, y_semi)
    np.testing.assert_allclose(clf.predict_proba(X), plain.predict_proba(X))


@pytest.mark.parametrize("ensemble", [False, True])
def test_fallback_estimator_of_ones_own_multiclass_and_ensemble(ensemble):
    """A given supervised fallback is fitted on the labeled rows only; its folds serve ensemble=True."""
    X, y, y_semi = _blobs()
    fallback = LogisticRegression()
    clf = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3, ensemble=ensemble, fallback=fallback)
    clf.fit(X, y_semi)
    assert clf.fallback_scores_.shape == (2,) and np.isfinite(clf.fallback_scores_).all()
    kinds = {type(fold.estimator) for fold in clf.calibrated_classifiers_}
    assert kinds == {LogisticRegression if clf.fell_back_ else TransductiveSVC}
    assert len(clf.calibrated_classifiers_) == (3 if ensemble else 1)
    if clf.fell_back_:
        assert all(fold.estimator.n_features_in_ == X.shape[1] for fold in clf.calibrated_classifiers_)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    assert not hasattr(fallback, "coef_")  # cloned, never fitted itself


def test_cross_validated_brier_calibrates_each_fold_on_the_others():
    """fallback_scores_ are Brier scores of out-of-fold probabilities from calibrators that never saw the fold."""
    X, _, y_semi = _blobs(n_classes=2)
    clf = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi)
    splits = [test for _, test in SemiSupervisedKFold(3).split(X, y_semi)]
    labeled = np.flatnonzero(y_semi != -1)
    proba = np.empty(y_semi.shape[0])
    for k, test in enumerate(splits):
        train = np.setdiff1d(labeled, test)
        model = LinearL2SVC().fit(X[train], y_semi[train])
        others = [t for j, t in enumerate(splits) if j != k]
        scores = []
        for t in others:
            rows_t = np.setdiff1d(labeled, t)
            scores.append(LinearL2SVC().fit(X[rows_t], y_semi[rows_t]).decision_function(X[t]))
        rows = np.concatenate(others)
        calibrator = _SigmoidCalibrator().fit(np.concatenate(scores), y_semi[rows] == 1, np.ones(rows.size))
        proba[test] = calibrator.predict(model.decision_function(X[test]))
    expected = brier_score_loss(y_semi[labeled], proba[labeled])
    np.testing.assert_allclose(clf.fallback_scores_[0], expected, rtol=1e-10)


def test_sample_weight_for_a_fallback_without_it_raises():
    class NoWeights(LinearL2SVC):
        def fit(self, X, y):
            return super().fit(X, y)

    X, _, y_semi = _blobs(n_classes=2)
    clf = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3, fallback=NoWeights())
    with pytest.raises(ValueError, match=r"NoWeights.fit \(the fallback\) does not take sample_weight"):
        clf.fit(X, y_semi, sample_weight=np.ones(len(y_semi)))


def test_sklearn_wrapper_takes_minus_one_for_a_class():
    """The failure the wrapper exists for: CalibratedClassifierCV learns -1 as a class; ours does not."""
    X, _, y_semi = _blobs(n_classes=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = CalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi)
    assert -1 in theirs.classes_
    ours = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi)
    assert -1 not in ours.classes_


def test_sparse_input_gives_the_dense_probabilities():
    X, _, y_semi = _blobs(n_classes=2)
    dense = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi)
    sparse = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X), rtol=1e-6, atol=1e-8)


def test_sample_weight_reaches_the_estimator_and_the_calibrators():
    X, _, y_semi = _blobs(n_classes=2)
    plain = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi)
    ones = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi, sample_weight=np.ones(len(y_semi)))
    np.testing.assert_allclose(ones.predict_proba(X), plain.predict_proba(X))
    weights = np.where(y_semi == -1, 1.0, np.linspace(0.2, 3.0, len(y_semi)))
    weighted = SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_semi, sample_weight=weights)
    assert not np.allclose(weighted.predict_proba(X), plain.predict_proba(X))


def test_sample_weight_for_an_estimator_without_it_raises():
    class NoWeights(LabeledOnlyClassifier):
        def fit(self, X, y):
            return super().fit(X, y)

    X, _, y_semi = _blobs(n_classes=2)
    clf = SemiSupervisedCalibratedClassifierCV(NoWeights(LogisticRegression()), cv=3)
    with pytest.raises(ValueError, match="does not take sample_weight"):
        clf.fit(X, y_semi, sample_weight=np.ones(len(y_semi)))


def test_too_few_labeled_rows_per_class_raises():
    X, _, y_semi = _blobs(n_classes=2)
    y_few = y_semi.copy()
    y_few[np.flatnonzero(y_semi == 1)[2:]] = -1  # two labeled rows of class 1
    with pytest.raises(ValueError, match="3-fold cross-validation.*2 row"):
        SemiSupervisedCalibratedClassifierCV(_tsvm(), cv=3).fit(X, y_few)


def test_estimator_with_predict_proba_only():
    """A base without decision_function is calibrated on its probabilities (here a labeled-only pipeline)."""
    X, y, y_semi = _blobs()
    clf = SemiSupervisedCalibratedClassifierCV(LabeledOnlyClassifier(LogisticRegression()), cv=3).fit(X, y_semi)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.score(X, y) > 0.9


def test_default_estimator_is_a_transductive_svm():
    X, y = _stripes(0, n=30)
    y_semi = make_semi_supervised(y, 6, per_class=True, random_state=0)
    clf = SemiSupervisedCalibratedClassifierCV(cv=2).fit(X, y_semi)
    assert all(isinstance(fold.estimator, TransductiveSVC) for fold in clf.calibrated_classifiers_)


def test_sigmoid_is_platts_method():
    """The LogisticRegression on doubled rows minimises Platt's objective: scikit-learn's private fit agrees."""
    rng = np.random.RandomState(0)
    scores = np.r_[rng.randn(20) - 2, rng.randn(15) + 2]  # nearly separable, few rows: the smoothing matters
    positive = np.r_[np.zeros(20, bool), np.ones(15, bool)]
    weights = rng.uniform(0.5, 2.0, 35)
    ours = _SigmoidCalibrator().fit(scores, positive, weights)
    a, b = _sigmoid_calibration(scores, positive.astype(int), weights)  # P = 1 / (1 + exp(a f + b))
    np.testing.assert_allclose([ours.a_, ours.b_], [-a, -b], rtol=1e-3, atol=1e-4)
    separable = _SigmoidCalibrator().fit(np.r_[-np.ones(4), np.ones(4)], np.r_[[False] * 4, [True] * 4], np.ones(8))
    assert np.isfinite(separable.a_) and separable.predict(np.array([10.0]))[0] < 1.0


def test_no_unlabeled_warning_names_the_meta_estimator():
    """OneVsRestClassifier turns -1 into the "rest" of a 0/1 target: the S3VM's warning says what happened."""
    X, _, y_semi = _blobs()
    with pytest.warns(NoUnlabeledDataWarning, match="meta-estimator.*OneVsRestClassifier.*SemiSupervisedCalibrated"):
        OneVsRestClassifier(_tsvm()).fit(X, y_semi)

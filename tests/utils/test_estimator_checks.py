"""The semi-supervised checks must catch estimators that break the contract."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from skssl.utils.estimator_checks import (
    check_all_unlabeled_raises,
    check_classes_exclude_unlabeled,
    check_deterministic_fit,
    check_fit_does_not_mutate_input,
    check_score_ignores_unlabeled,
    check_semi_supervised_estimator,
    check_transduction,
    check_unlabeled_rows_change_fit,
)

from .._toy_estimator import SeededCentroidClassifier


class _IgnoresUnlabeled(SeededCentroidClassifier):
    """Drops the unlabeled rows: a supervised model in disguise."""

    def fit(self, X, y):
        y = np.asarray(y)
        keep = y != -1
        super().fit(X[keep], y[keep])
        self.transduction_ = np.where(keep, y, self.predict(X))
        return self


class _NaiveClasses(ClassifierMixin, BaseEstimator):
    """Treats -1 as a class and mutates y, the way a naive wrapper would."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        y[0] = y[0]  # harmless
        self.transduction_ = np.asarray(y)[:-1]
        if np.all(np.asarray(y) == -1):
            return self
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


class _MutatesInput(SeededCentroidClassifier):
    def fit(self, X, y):
        super().fit(X, y)
        X[0, 0] = 123.0
        return self


class _RandomEveryFit(SeededCentroidClassifier):
    def decision_function(self, X):
        return super().decision_function(X) + np.random.rand(*np.shape(super().decision_function(X)))


class _ScoresEveryRow(SeededCentroidClassifier):
    def score(self, X, y, sample_weight=None):
        return float(np.mean(self.predict(X) == y))


def test_a_correct_estimator_passes_every_check():
    check_semi_supervised_estimator(SeededCentroidClassifier())


@pytest.mark.parametrize(
    "check, broken",
    [
        (check_unlabeled_rows_change_fit, _IgnoresUnlabeled()),
        (check_classes_exclude_unlabeled, _NaiveClasses()),
        (check_all_unlabeled_raises, _NaiveClasses()),
        (check_transduction, _NaiveClasses()),
        (check_fit_does_not_mutate_input, _MutatesInput()),
        (check_deterministic_fit, _RandomEveryFit()),
        (check_score_ignores_unlabeled, _ScoresEveryRow()),
    ],
)
def test_each_check_catches_its_breakage(check, broken):
    with pytest.raises(AssertionError):
        check(type(broken).__name__, broken)

"""Fits of one meta-estimator object in threads at once end as a single fit of a fresh clone."""

import threading

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression

from skssl.self_training import CurriculumLabelingClassifier, LabeledOnlyClassifier

N_THREADS = 4


def _problem(seed):
    rng = np.random.RandomState(seed)
    X = rng.randn(60, 4)
    y = (X[:, 0] + 0.5 * rng.randn(60) > 0).astype(int)
    y[20:] = -1
    return X, y


def _fit_in_threads(est, X, y):
    start = threading.Barrier(N_THREADS)
    errors = []

    def fit():
        try:
            start.wait(30)
            est.fit(X, y)
        except Exception as error:  # noqa: BLE001 -- reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=fit) for _ in range(N_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive()
    assert not errors, errors


def _assert_same(value, expected, name):
    if isinstance(expected, list):  # history_: dicts of numbers, NaN among them (repr is exact for floats)
        assert repr(value) == repr(expected), name
    elif hasattr(expected, "get_params"):  # the wrapped model: its own fitted attributes
        _assert_same_fit(value, expected)
    else:
        np.testing.assert_array_equal(value, expected, err_msg=name)


def _assert_same_fit(est, reference):
    fitted = {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}
    expected = {k: v for k, v in vars(reference).items() if k.endswith("_") and not k.startswith("_")}
    assert sorted(fitted) == sorted(expected)
    for name, value in expected.items():
        _assert_same(fitted[name], value, name)


UNGUARDED = CurriculumLabelingClassifier(LogisticRegression(), safeguard=None, random_state=0)
CASES = [
    (UNGUARDED, 0),
    (UNGUARDED, 1),
    (CurriculumLabelingClassifier(LogisticRegression(), random_state=0), 0),  # the default safeguard
    (LabeledOnlyClassifier(LogisticRegression()), 0),
]


@pytest.mark.parametrize(("est", "seed"), CASES, ids=["curriculum-0", "curriculum-1", "safeguard", "labeled-only"])
def test_threads_fitting_one_object_end_as_one_fit(est, seed):
    X, y = _problem(seed)
    shared = clone(est)
    single = clone(est).fit(X, y)
    _fit_in_threads(shared, X, y)
    _assert_same_fit(shared, single)


def test_round0_model_is_kept_only_where_it_was_asked_for():
    """The safeguard's folds ask for round 0's model; a plain fit does not keep it, a refit drops it."""
    X, y = _problem(2)
    est = CurriculumLabelingClassifier(LogisticRegression(), random_state=0)
    est._keep_round0_estimator = True
    est.fit(X, y)
    assert hasattr(est, "_round0_estimator")
    del est._keep_round0_estimator
    assert not hasattr(est.fit(X, y), "_round0_estimator")


class _GatedClassifier(ClassifierMixin, BaseEstimator):
    """A nearest-mean-direction classifier whose fits, while ``_GATE`` is set, meet before any returns.

    With the gate, the fit of the model that the shared meta-estimator holds at that moment (if any) returns
    first and the others wait until its meta-estimator's fit is done: the order in which a meta-estimator that
    kept ``estimator_`` on itself during the fit used one thread's model for another thread's rows.
    """

    def fit(self, X, y):
        X = np.asarray(X, dtype=float)
        self.classes_ = np.unique(y)
        self.center_ = X[y == self.classes_[1]].mean(axis=0) - X[y == self.classes_[0]].mean(axis=0)
        gate = _GATE.get("gate")
        if gate is not None:
            gate["inside"].wait(30)
            held = gate["meta"].__dict__.get("estimator_")
            if held is not None and held is not self:
                assert gate["first_done"].wait(30)
        return self

    def predict(self, X):
        return self.classes_[(np.asarray(X) @ self.center_ > 0).astype(int)]


_GATE = {}


def test_threads_fitting_one_labeled_only_object_on_different_rows_end_as_one_of_the_fits():
    """Each thread fits other rows; the object ends as one of those fits, its model and its rows together."""
    problems = [_problem(seed) for seed in range(N_THREADS)]
    problems = [(X[: 40 + 5 * k], y[: 40 + 5 * k]) for k, (X, y) in enumerate(problems)]
    shared = LabeledOnlyClassifier(_GatedClassifier())
    first_done = threading.Event()
    _GATE["gate"] = {"inside": threading.Barrier(N_THREADS), "meta": shared, "first_done": first_done}
    errors = []

    def fit(X, y):
        try:
            shared.fit(X, y)
        except Exception as error:  # noqa: BLE001 -- reported by the assertion below
            errors.append(error)
        finally:
            first_done.set()

    try:
        threads = [threading.Thread(target=fit, args=problem) for problem in problems]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
            assert not thread.is_alive()
    finally:
        _GATE.clear()
    assert not errors, errors
    k = (shared.transduction_.shape[0] - 40) // 5
    _assert_same_fit(shared, LabeledOnlyClassifier(_GatedClassifier()).fit(*problems[k]))

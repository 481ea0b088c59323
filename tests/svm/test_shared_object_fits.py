"""Fits of one estimator object: in threads at once, or one after another, each ends as a single fresh fit.

Four threads that fit the same object must leave it exactly as one fit of a
fresh clone leaves its clone (every fitted attribute, bit for bit, and no
``ConvergenceWarning`` the single fit does not give); a refit on other data
must leave no attribute of the first fit behind. The problems have labeled
rows that separate, so that ``alpha="auto"`` is scaled by the labeled rows'
check (a factor below 1): overlapping fits that scaled one ``alpha_`` in
turn ended with it many times too small.
"""

import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.svm.defaults._regularization import resolve_regularization

from .._tiers import fast_first

N_THREADS = 4


def _problem(seed, n_classes=2, sparse=False):
    """Labeled rows that separate (by their largest feature), the rest unlabeled."""
    rng = np.random.RandomState(seed)
    X = rng.randn(45, 4)
    y = X[:, :n_classes].argmax(axis=1) if n_classes > 2 else (X[:, 0] > 0).astype(int)
    y[18:] = -1
    if sparse:
        X = sp.csr_matrix(X * (np.abs(X) > 0.3))
    return X, y


def _fitted(est):
    return {name: value for name, value in vars(est).items() if name.endswith("_") and not name.startswith("_")}


def _assert_same_fit(est, reference):
    fitted, expected = _fitted(est), _fitted(reference)
    assert sorted(fitted) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(fitted[name], value, err_msg=name)


def _convergence_messages(caught):
    return {str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)}


def _fit_recording(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return _convergence_messages(caught)


def _fit_in_threads(est, X, y):
    """``est.fit(X, y)`` in ``N_THREADS`` threads started together; the ConvergenceWarning messages."""
    start = threading.Barrier(N_THREADS)
    errors = []

    def fit():
        try:
            start.wait(30)
            est.fit(X, y)
        except Exception as error:  # noqa: BLE001 -- reported by the test below
            errors.append(error)

    def run():
        threads = [threading.Thread(target=fit) for _ in range(N_THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
            assert not thread.is_alive()

    messages = _fit_recording(run)
    assert not errors, errors
    return messages


ESTIMATORS = [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]


def _unguarded(Est, **params):
    """``Est(**params)`` with ``safeguard=None`` where it has one (the safeguard is not what is tested)."""
    return Est(**params) if Est is LinearL2SVC else Est(safeguard=None, **params)


#: (seed, classes, sparse) of problems where the labeled rows' check scales alpha="auto" down.
# A binary and a 3-class sparse problem in the fast suite, all five in the whole suite.
SCALED_PROBLEMS = fast_first([(0, 2, False), (0, 3, True), (1, 2, False), (5, 2, True), (3, 3, False)], 2)


def _assert_alpha_scaled(est, X, y):
    """The problem is one the check scales ``alpha_`` on: where overlapping fits scaled one another's."""
    unlabeled_weight = 0.0 if isinstance(est, LinearL2SVC) else est.unlabeled_weight
    rule, _ = resolve_regularization("auto", "auto", X, y != -1, None, unlabeled_weight=unlabeled_weight)
    assert est.alpha_ < rule


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize(("seed", "n_classes", "sparse"), SCALED_PROBLEMS)
def test_threads_fitting_one_object_end_as_one_fit(Est, seed, n_classes, sparse):
    X, y = _problem(seed, n_classes, sparse)
    shared = _unguarded(Est)
    single = clone(shared)
    single_messages = _fit_recording(lambda: single.fit(X, y))
    _assert_alpha_scaled(single, X, y)
    thread_messages = _fit_in_threads(shared, X, y)
    _assert_same_fit(shared, single)
    assert thread_messages <= single_messages


def test_threads_fitting_one_object_with_the_default_safeguard():
    """The defaults: the safeguard's candidates and its check are fits started inside each fit."""
    X, y = _problem(0)
    shared = TransductiveSVC()
    single = clone(shared)
    single_messages = _fit_recording(lambda: single.fit(X, y))
    assert single.safeguard_agreement_ is not None
    assert _fit_in_threads(shared, X, y) <= single_messages
    _assert_same_fit(shared, single)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_a_refit_is_a_fresh_fit_of_the_new_data(Est):
    X_a, y_a = _problem(4, n_classes=3)
    X_b, y_b = _problem(5, sparse=True)
    X_b = X_b[:, :3]  # another number of features
    est = _unguarded(Est).fit(X_a, y_a)
    est.fit(X_b, y_b)
    _assert_same_fit(est, _unguarded(Est).fit(X_b, y_b))


def test_a_refit_drops_the_attributes_the_new_fit_does_not_set():
    """An attribute ending in ``_`` that the new fit does not set (here set by hand) is gone after it."""
    X, y = _problem(6)
    est = LinearL2SVC().fit(X, y)
    est.stale_ = "left by an earlier fit"
    est.fit(X, y)
    assert not hasattr(est, "stale_")


def test_a_fit_that_raises_leaves_the_estimator_as_it_was():
    X, y = _problem(7)
    est = TransductiveSVC(safeguard=None).fit(X, y)
    before = _fitted(est)
    with pytest.raises(ValueError, match="alpha"):
        est.set_params(alpha=1e-300).fit(X, y)
    assert _fitted(est).keys() == before.keys()
    for name, value in before.items():
        np.testing.assert_array_equal(_fitted(est)[name], value)


def test_the_supervised_svm_has_no_safeguard_attributes():
    X, y = _problem(8)
    for fitted in (LinearL2SVC().fit(X, y), LinearL2SVC().fit(sp.csr_matrix(X), y)):
        for name in ("safeguard_fell_back_", "safeguard_agreement_", "safeguard_scores_"):
            assert not hasattr(fitted, name)

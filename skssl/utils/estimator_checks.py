"""skssl's own checks of the semi-supervised estimator contract.

The checks test what a semi-supervised estimator promises beyond
scikit-learn's own checks (the contract of ``skssl.base``), as imbalanced-learn
ships ``imblearn.utils.estimator_checks``. Use
:func:`parametrize_with_semi_supervised_checks` in a pytest module, or
:func:`check_semi_supervised_estimator` to run them all at once.
"""

import warnings
from functools import partial

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn.datasets import make_blobs, make_classification
from sklearn.utils import check_random_state, get_tags

from ..base import NoUnlabeledDataWarning
from ..datasets import make_semi_supervised

__all__ = [
    "check_all_unlabeled_raises",
    "check_classes_exclude_unlabeled",
    "check_deterministic_fit",
    "check_fit_does_not_mutate_input",
    "check_object_labels_with_unlabeled",
    "check_score_ignores_unlabeled",
    "check_semi_supervised_estimator",
    "check_sparse_dense_same_model",
    "check_transduction",
    "check_unlabeled_rows_change_fit",
    "parametrize_with_semi_supervised_checks",
    "yield_semi_supervised_checks",
]


def _semi_supervised_data(n_classes=3, n_samples=90, labeled_per_class=3, random_state=0):
    """Well separated blobs with a few labeled rows per class, the rest -1."""
    X, y = make_blobs(
        n_samples=n_samples,
        centers=n_classes,
        n_features=4,
        cluster_std=1.5,
        random_state=random_state,
    )
    X = X - X.min() + 0.1  # non-negative, so that a sparse copy is meaningful too
    y_semi = make_semi_supervised(y, labeled_per_class, per_class=True, random_state=random_state)
    return X, y, y_semi


def _overlapping_data(random_state=6):
    """Two overlapping classes, 40% of 120 rows labeled (``random_state=6`` exposes format-dependent row orders)."""
    X, y = make_classification(120, 8, n_informative=4, n_clusters_per_class=1, flip_y=0.1, random_state=random_state)
    y_semi = np.where(np.random.RandomState(random_state).rand(120) < 0.6, -1, y)
    return X, y, y_semi


_PARAMETERS_HEADER = "    Parameters\n    ----------\n"

_CHECK_PARAMETERS = """\
    name : str
        Name of the estimator, used in the failure messages.
    estimator : estimator instance
        The estimator to check; it is cloned before every fit.
"""


def _check_parameters(check):
    """Put the shared ``name`` and ``estimator`` entries first in a check's Parameters section."""
    doc = check.__doc__
    if _PARAMETERS_HEADER in doc:
        check.__doc__ = doc.replace(_PARAMETERS_HEADER, _PARAMETERS_HEADER + _CHECK_PARAMETERS, 1)
    else:
        check.__doc__ = f"{doc.rstrip()}\n\n{_PARAMETERS_HEADER}{_CHECK_PARAMETERS}    "
    return check


def _outputs(estimator, X):
    """The richest output the estimator has, as a float array."""
    for method in ("decision_function", "predict_proba"):
        if hasattr(estimator, method):
            return np.asarray(getattr(estimator, method)(X), dtype=float)
    return np.asarray(estimator.predict(X))


def _with_seed(estimator, seed=0):
    estimator = clone(estimator)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=seed)
    return estimator


@_check_parameters
def check_classes_exclude_unlabeled(name, estimator):
    """``classes_`` holds the labeled classes only, never ``-1``."""
    X, _, y_semi = _semi_supervised_data()
    est = _with_seed(estimator).fit(X, y_semi)
    assert -1 not in list(est.classes_), f"{name}.classes_ contains -1: {est.classes_}"
    np.testing.assert_array_equal(est.classes_, np.unique(y_semi[y_semi != -1]))
    assert set(np.unique(est.predict(X))) <= set(est.classes_), f"{name} predicts -1"


@_check_parameters
def check_all_unlabeled_raises(name, estimator):
    """A target with every row ``-1`` raises a ``ValueError`` naming it."""
    X, _, y_semi = _semi_supervised_data()
    try:
        clone(estimator).fit(X, np.full_like(y_semi, -1))
    except ValueError as exc:
        assert "no labeled" in str(exc), f"{name}: unclear error for an all -1 y: {exc}"
    else:
        raise AssertionError(f"{name} did not raise on a y where every row is -1")


@_check_parameters
def check_transduction(name, estimator):
    """``transduction_`` has one label per row; labeled rows keep theirs."""
    X, _, y_semi = _semi_supervised_data()
    est = _with_seed(estimator).fit(X, y_semi)
    transduction = np.asarray(est.transduction_)
    assert transduction.shape == (X.shape[0],), f"{name}.transduction_ has shape {transduction.shape}"
    labeled = y_semi != -1
    np.testing.assert_array_equal(transduction[labeled], y_semi[labeled])
    assert set(np.unique(transduction)) <= set(est.classes_)


DUPLICATE_ENTRIES_RTOL = 1e-3
DUPLICATE_ENTRIES_ATOL = 1e-5


@_check_parameters
def check_sparse_dense_same_model(name, estimator, rtol=1e-5, atol=1e-7):
    """CSR and dense input give the same outputs (skipped for dense-only estimators).

    The CSR input is also given with every entry stored as two parts that sum to it; the looser tolerances
    of that comparison allow for a wrapped optimizer summing the parts in another order.

    Parameters
    ----------
    rtol, atol : float, default=1e-5 and 1e-7
        Tolerances of the comparison of the two models' outputs; with entries stored twice at least
        ``DUPLICATE_ENTRIES_RTOL`` (1e-3) and ``DUPLICATE_ENTRIES_ATOL`` (1e-5).
    """
    if not get_tags(estimator).input_tags.sparse:
        return
    # overlapping classes make an estimator's own checks on the labeled rows expose format-dependent row orders
    for X, _, y_semi in (_semi_supervised_data(), _overlapping_data()):
        dense = _with_seed(estimator).fit(X, y_semi)
        forms = (
            ("sparse", sp.csr_matrix(X), rtol, atol),
            (
                "sparse with duplicate entries",
                _duplicate_entries(X),
                max(rtol, DUPLICATE_ENTRIES_RTOL),
                max(atol, DUPLICATE_ENTRIES_ATOL),
            ),
        )
        for what, X_sparse, form_rtol, form_atol in forms:
            sparse = _with_seed(estimator).fit(X_sparse, y_semi)
            np.testing.assert_allclose(
                _outputs(sparse, X_sparse),
                _outputs(dense, X),
                rtol=form_rtol,
                atol=form_atol,
                err_msg=f"{name}: {what} and dense input give different models",
            )


def _duplicate_entries(X, random_state=0):
    """CSR ``X`` with each non-zero ``v`` stored as two parts summing to ``v`` exactly, drawn at random."""
    A = sp.csr_matrix(X)
    first = check_random_state(random_state).choice([0.5, 2.0, -1.0], A.nnz) * A.data
    data = np.column_stack([first, A.data - first]).ravel()
    return sp.csr_matrix((data, np.repeat(A.indices, 2), A.indptr * 2), shape=A.shape)


@_check_parameters
def check_unlabeled_rows_change_fit(name, estimator):
    """Fitting with the unlabeled rows gives another model than without them.

    A ``safeguard`` parameter is set to None: a safeguard may return the labeled-only model by design.
    """
    X, _, y_semi = _semi_supervised_data()
    labeled = y_semi != -1
    estimator = clone(estimator)
    if "safeguard" in estimator.get_params():
        estimator.set_params(safeguard=None)
    with_unlabeled = _with_seed(estimator).fit(X, y_semi)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoUnlabeledDataWarning)
        labeled_only = _with_seed(estimator).fit(X[labeled], y_semi[labeled])
    a, b = _outputs(with_unlabeled, X), _outputs(labeled_only, X)
    assert not np.allclose(a, b, rtol=1e-6, atol=1e-9), f"{name} ignores the unlabeled rows: same model"


@_check_parameters
def check_object_labels_with_unlabeled(name, estimator):
    """String labels in an ``object`` array mixed with the integer ``-1`` work."""
    X, _, y_semi = _semi_supervised_data()
    names = np.array(["ant", "bee", "cat"], dtype=object)
    y_obj = np.array([-1 if v == -1 else names[v] for v in y_semi], dtype=object)
    est = _with_seed(estimator).fit(X, y_obj)
    assert list(est.classes_) == ["ant", "bee", "cat"], f"{name}.classes_ = {est.classes_}"
    assert set(est.predict(X)) <= {"ant", "bee", "cat"}
    numeric = _with_seed(estimator).fit(X, y_semi)
    np.testing.assert_array_equal(est.predict(X), names[numeric.predict(X)].astype(str))


@_check_parameters
def check_score_ignores_unlabeled(name, estimator):
    """``score`` on a ``y`` with ``-1`` rows equals the accuracy on the labeled rows."""
    X, y, y_semi = _semi_supervised_data()
    est = _with_seed(estimator).fit(X, y_semi)
    y_eval = y.copy()
    y_eval[::3] = -1
    kept = y_eval != -1
    expected = np.mean(est.predict(X[kept]) == y[kept])
    assert np.isclose(est.score(X, y_eval), expected), f"{name}.score counts the -1 rows"


@_check_parameters
def check_fit_does_not_mutate_input(name, estimator):
    """``fit`` leaves the caller's ``X`` and ``y`` untouched (dense and sparse)."""
    X, _, y_semi = _semi_supervised_data()
    inputs = [X]
    if get_tags(estimator).input_tags.sparse:
        inputs.append(sp.csr_matrix(X))
    for X_in in inputs:
        X_before = X_in.copy()
        y_in = y_semi.copy()
        _with_seed(estimator).fit(X_in, y_in)
        if sp.issparse(X_in):
            assert (X_in != X_before).nnz == 0, f"{name}.fit modified a sparse X"
        else:
            np.testing.assert_array_equal(X_in, X_before, err_msg=f"{name}.fit modified X")
        np.testing.assert_array_equal(y_in, y_semi, err_msg=f"{name}.fit modified y")


@_check_parameters
def check_deterministic_fit(name, estimator):
    """Two fits with the same ``random_state`` give the same model."""
    X, _, y_semi = _semi_supervised_data()
    a = _outputs(_with_seed(estimator, 7).fit(X, y_semi), X)
    b = _outputs(_with_seed(estimator, 7).fit(X, y_semi), X)
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=f"{name} is not deterministic")


_CHECKS = (
    check_classes_exclude_unlabeled,
    check_all_unlabeled_raises,
    check_transduction,
    check_sparse_dense_same_model,
    check_unlabeled_rows_change_fit,
    check_object_labels_with_unlabeled,
    check_score_ignores_unlabeled,
    check_fit_does_not_mutate_input,
    check_deterministic_fit,
)


def yield_semi_supervised_checks(estimator):
    """Yield ``(estimator, check)`` pairs, each ``check(name, estimator)``.

    Parameters
    ----------
    estimator : estimator instance
        A semi-supervised classifier following skssl's contract.

    Yields
    ------
    estimator : estimator instance
    check : callable
    """
    if not is_classifier(estimator):
        raise ValueError(f"{type(estimator).__name__} is not a classifier.")
    for check in _CHECKS:
        yield estimator, partial(check, type(estimator).__name__)


def check_semi_supervised_estimator(estimator):
    """Run every semi-supervised check on ``estimator``; raise on the first failure.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to check.

    Raises
    ------
    AssertionError
        At the first check the estimator fails.

    Examples
    --------
    >>> from skssl.svm import TransductiveSVC
    >>> from skssl.utils.estimator_checks import check_semi_supervised_estimator
    >>> check_semi_supervised_estimator(TransductiveSVC())  # raises if a check fails
    """
    for est, check in yield_semi_supervised_checks(estimator):
        check(est)


def parametrize_with_semi_supervised_checks(estimators, *, expected_failed_checks=None):
    """Pytest decorator running skssl's checks on each estimator.

    Parameters
    ----------
    estimators : list of estimator instances
        Estimators to check.
    expected_failed_checks : callable, default=None
        ``expected_failed_checks(estimator)`` returns a dict mapping the name
        of a check expected to fail on that estimator to the reason; those
        checks are marked ``xfail`` with the reason (as in sklearn's
        :func:`~sklearn.utils.estimator_checks.parametrize_with_checks`).

    Returns
    -------
    decorator : ``pytest.mark.parametrize``
        Parametrizes a test function with arguments ``(estimator, check)``.

    Examples
    --------
    >>> from skssl.utils.estimator_checks import parametrize_with_semi_supervised_checks
    >>> from sklearn.semi_supervised import SelfTrainingClassifier
    >>> from sklearn.linear_model import LogisticRegression
    >>> @parametrize_with_semi_supervised_checks([SelfTrainingClassifier(LogisticRegression())])
    ... def test_semi_supervised(estimator, check):
    ...     check(estimator)
    """
    import pytest

    def _id(obj):
        if isinstance(obj, partial):
            return obj.func.__name__
        return type(obj).__name__

    params = []
    for estimator in estimators:
        expected = expected_failed_checks(estimator) if expected_failed_checks is not None else {}
        for est, check in yield_semi_supervised_checks(estimator):
            reason = expected.get(check.func.__name__)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            params.append(pytest.param(est, check, marks=marks, id=f"{_id(est)}-{_id(check)}"))
    return pytest.mark.parametrize("estimator, check", params)

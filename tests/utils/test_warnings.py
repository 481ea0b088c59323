"""Warnings point at the user's call, whatever the frames of skssl and scikit-learn between (skssl.utils._warnings)."""

import warnings

import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skssl.base import NoUnlabeledDataWarning
from skssl.self_training import CurriculumLabelingClassifier
from skssl.svm import DeterministicAnnealingSVC, LinearL2SVC, PottsDeterministicAnnealingSVC, TransductiveSVC
from skssl.utils._warnings import user_stacklevel


def _problem():
    X, y = make_classification(100, 5, random_state=0)
    y_semi = y.copy()
    y_semi[::2] = -1
    return X, y, y_semi


def _where_warned(fit, category):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    found = [w for w in caught if issubclass(w.category, category)]
    assert found, f"no {category.__name__}"
    return {(w.filename, w.lineno) for w in found}


@pytest.mark.parametrize(
    "Est", [LinearL2SVC, TransductiveSVC, DeterministicAnnealingSVC, PottsDeterministicAnnealingSVC]
)
def test_a_capped_fit_warns_at_the_users_line(Est):
    from sklearn.exceptions import ConvergenceWarning

    X, _, y_semi = _problem()
    params = {"max_iter": 1} if Est is LinearL2SVC else {"max_iter": 1, "safeguard": None}
    line = _line_of_next_call()
    found = _where_warned(lambda: Est(**params).fit(X, y_semi), ConvergenceWarning)  # the user's line
    assert found == {(__file__, line)}


@pytest.mark.parametrize(
    "make",
    [TransductiveSVC, PottsDeterministicAnnealingSVC, lambda: CurriculumLabelingClassifier(LogisticRegression())],
)
def test_a_fully_labeled_y_warns_at_the_users_line(make):
    X, y, _ = _problem()
    line = _line_of_next_call()
    found = _where_warned(lambda: make().fit(X, y), NoUnlabeledDataWarning)  # the user's line
    assert found == {(__file__, line)}


def _line_of_next_call():
    """The line after the caller's current one."""
    import sys

    return sys._getframe(1).f_lineno + 1


def test_user_stacklevel_counts_the_internal_frames():
    # Called from this test file, which is outside skssl and scikit-learn, the caller itself is the user's frame.
    assert user_stacklevel() == 1

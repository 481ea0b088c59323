"""Cross-validation and scoring with unlabeled rows.

Plain scikit-learn cross-validation scores ``y == -1`` rows as errors and
stratifies on ``-1`` as a class. :class:`SemiSupervisedKFold` splits the
labeled rows and adds every unlabeled row to every training fold;
:func:`labeled_scorer` wraps a scorer so that it drops the ``-1`` rows.

Design decisions: user guide, Implementation decisions (shared contract), "Cross-validation".
"""

import numbers
import warnings

import numpy as np
from sklearn.metrics import check_scoring
from sklearn.model_selection import BaseCrossValidator, check_cv
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils.validation import _num_samples

from .base import (
    NoUnlabeledDataWarning,
    SemiSupervisedClassifierMixin,
    UnlabeledAsClassWarning,
    _as_1d_target,
    _labeled_scoring_rows,
    _labeled_targets,
    encode_semi_supervised_target,
    labeled_mask,
)
from .utils.validation import check_sparse_structure
from .utils._warnings import user_stacklevel

__all__ = ["SemiSupervisedKFold", "labeled_scorer"]


class SemiSupervisedKFold(BaseCrossValidator):
    """Cross-validator for targets where ``y == -1`` marks unlabeled rows.

    The labeled rows are split by an inner cross-validator; every unlabeled
    row is added to every training fold and never appears in a test fold.

    Parameters
    ----------
    cv : int, cross-validation generator or iterable, default=5
        The splitter of the labeled rows, as in
        :func:`sklearn.model_selection.check_cv` (an int is a
        ``StratifiedKFold``). The indices of an iterable of ``(train, test)``
        pairs are positions among the labeled rows, not rows of ``X``.

    See Also
    --------
    labeled_scorer : Score only the labeled rows when the splitter is not yours.
    sklearn.model_selection.StratifiedKFold : The default inner splitter.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.model_selection import SemiSupervisedKFold
    >>> y = np.array([0, 1, -1, 0, 1, -1, 0, 1])
    >>> cv = SemiSupervisedKFold(cv=3)
    >>> for train, test in cv.split(np.zeros((8, 1)), y):
    ...     print(train, test)
    [2 3 4 5 6 7] [0 1]
    [0 1 2 5 6 7] [3 4]
    [0 1 2 3 4 5] [6 7]
    """

    def __init__(self, cv=5):
        self.cv = cv

    def _inner_cv(self, y_labeled):
        return check_cv(self.cv, y_labeled, classifier=True)

    def split(self, X, y, groups=None):
        """Generate indices to split data into training and test sets.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows. Required.
        groups : array-like of shape (n_samples,), default=None
            Group labels of the inner splitter.

        Yields
        ------
        train : ndarray
            The training indices: labeled rows of the fold and all unlabeled rows.
        test : ndarray
            The test indices: labeled rows only.
        """
        if y is None:
            raise ValueError("SemiSupervisedKFold needs y to tell labeled from unlabeled rows.")
        n_samples = _num_samples(X)
        y = _as_1d_target(y)
        if y.shape[0] != n_samples:
            raise ValueError(f"X has {n_samples} rows but y has {y.shape[0]}.")
        X, y, groups = indexable(check_sparse_structure(X), y, groups)
        if not labeled_mask(y).any():
            raise ValueError("y has no labeled row: every entry is -1, nothing to test on.")
        # encoded: an object array of strings and -1 would trip the inner splitter
        _, y_encoded, mask = _encode_quietly(y)
        labeled, unlabeled = np.flatnonzero(mask), np.flatnonzero(~mask)
        y_labeled = y_encoded[labeled]
        groups_labeled = None if groups is None else _safe_indexing(groups, labeled)
        X_labeled = _safe_indexing(X, labeled)
        for train_l, test_l in self._inner_cv(y_labeled).split(X_labeled, y_labeled, groups_labeled):
            train_l, test_l = (_labeled_positions(part, labeled.size) for part in (train_l, test_l))
            train = np.sort(np.concatenate([labeled[train_l], unlabeled]))
            yield train, labeled[test_l]

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of splits: that of the inner cross-validator.

        Parameters
        ----------
        X, y, groups : object
            Passed to the inner cross-validator.

        Returns
        -------
        n_splits : int
            The number of train/test pairs :meth:`split` yields.
        """
        if isinstance(self.cv, numbers.Integral):
            return int(self.cv)
        if y is None:
            return check_cv(self.cv).get_n_splits(X, y, groups)
        _, y_encoded, mask = _encode_quietly(y)
        labeled = np.flatnonzero(mask)
        if X is not None:
            X, groups = indexable(X, groups)
        X_l = None if X is None else _safe_indexing(X, labeled)
        g_l = None if groups is None else _safe_indexing(groups, labeled)
        return self._inner_cv(y_encoded[labeled]).get_n_splits(X_l, y_encoded[labeled], g_l)

    def _iter_test_indices(self, X=None, y=None, groups=None):  # pragma: no cover - split is overridden
        for _, test in self.split(X, y, groups):
            yield test

    def __repr__(self):
        return f"{type(self).__name__}(cv={self.cv!r})"


def _labeled_positions(indices, n_labeled):
    """The inner splitter's indices, checked to be positions among the ``n_labeled`` labeled rows."""
    indices = np.asarray(indices)
    if indices.dtype == bool:
        if indices.shape != (n_labeled,):
            raise ValueError(
                f"A boolean fold of the inner splitter has shape {indices.shape}; it must mark the {n_labeled} "
                "labeled rows (y != -1), not the rows of X."
            )
        return np.flatnonzero(indices)
    if indices.size and (indices.dtype.kind not in "iu" or indices.min() < 0 or indices.max() >= n_labeled):
        raise ValueError(
            f"The inner splitter gave the indices {indices.min()} to {indices.max()}, but the inner splitter sees "
            f"only the {n_labeled} labeled rows (y != -1): its indices are positions among them (0 is the first "
            "labeled row), not rows of X."
        )
    return indices.astype(np.intp, copy=False)


def _encode_quietly(y):
    """Encode y for splitting; a fully labeled y is fine here (no warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoUnlabeledDataWarning)
        return encode_semi_supervised_target(y)


class _LabeledScorer:
    """A scorer that drops the rows with ``y == -1`` before scoring."""

    def __init__(self, scorer, scoring):
        self._scorer = scorer
        self._scoring = scoring

    def __call__(self, estimator, X, y_true, **kwargs):
        _warn_if_unlabeled_class(estimator)
        X, y_true, mask = _labeled_scoring_rows(X, y_true)
        rows = np.flatnonzero(mask)
        y_labeled = _labeled_targets(y_true, rows)
        kwargs = {
            key: (_safe_indexing(value, rows) if _is_per_row(value, mask.shape[0]) else value)
            for key, value in kwargs.items()
        }
        return self._scorer(estimator, _safe_indexing(X, rows), y_labeled, **kwargs)

    def __repr__(self):
        return f"labeled_scorer({self._scoring!r})"


#: Whether an UnlabeledAsClassWarning was emitted in this process (it is emitted once).
_unlabeled_class_warned = False


def _warn_if_unlabeled_class(estimator):
    """Warn once per process when a non-skssl classifier has ``-1`` in its ``classes_``."""
    global _unlabeled_class_warned
    if _unlabeled_class_warned:
        return
    final = estimator[-1] if isinstance(estimator, Pipeline) else estimator
    if isinstance(final, SemiSupervisedClassifierMixin):
        return
    classes = getattr(final, "classes_", None)  # None for a regressor: nothing to check
    if classes is None or not _holds_unlabeled_marker(classes):
        return
    _unlabeled_class_warned = True
    name = type(final).__name__
    where = f"the final step {name} of this Pipeline" if final is not estimator else name
    warnings.warn(
        f"{where} was fitted with -1 as one of its classes: it learned the unlabeled rows (y == -1) as a "
        "class of their own, so it predicts -1 for many rows and its scores are wrong. Wrap the classifier in "
        f"skssl.self_training.LabeledOnlyClassifier({name}(...)) to fit it on the labeled rows only (the "
        "supervised baseline), or use a semi-supervised estimator. This warning is shown once per process.",
        UnlabeledAsClassWarning,
        stacklevel=user_stacklevel(),
    )


def _holds_unlabeled_marker(classes):
    """Whether ``classes`` (or, for multi-output, one of its arrays) holds the number -1."""
    if isinstance(classes, list):
        return any(_holds_unlabeled_marker(c) for c in classes)
    classes = np.asarray(classes)
    if classes.dtype.kind in "iuf":
        return bool(np.any(classes == -1))
    if classes.dtype.kind == "O":
        return any(isinstance(v, numbers.Real) and not isinstance(v, bool) and v == -1 for v in classes.ravel())
    return False


def _is_per_row(value, n_rows):
    return hasattr(value, "__len__") and not isinstance(value, str) and len(value) == n_rows


def labeled_scorer(scoring=None, estimator=None):
    """Wrap a scorer so that it ignores the rows with ``y == -1``.

    Parameters
    ----------
    scoring : str, callable or None, default=None
        A scorer name, a scorer callable, or None for the estimator's ``score``.
    estimator : estimator object, default=None
        Only needed when ``scoring`` is None.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, **kwargs)`` on the labeled rows only (per-row
        keyword arguments cut to them).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skssl.model_selection import labeled_scorer
    >>> X = np.array([[0.0], [1.0], [0.1], [0.9]])
    >>> clf = LogisticRegression().fit(X, [0, 1, 0, 1])
    >>> labeled_scorer("accuracy")(clf, X, np.array([0, 1, -1, -1]))
    1.0
    """
    if scoring is None and estimator is None:
        raise ValueError("labeled_scorer(None) stands for the estimator's score: pass estimator too.")
    scorer = check_scoring(estimator, scoring=scoring)
    return _LabeledScorer(scorer, scoring)

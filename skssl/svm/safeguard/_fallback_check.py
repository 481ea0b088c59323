"""The safeguard's cross-validated check: keep the supervised l2-SVM where the held-out labels prefer it.

The agreement of the safeguard's candidates (:mod:`skssl.svm.safeguard._safeguard`)
cannot see a low-density separator that every candidate shares and that
the labels contradict. ``safeguard="cross_validation"`` asks the labels, as
the safeguard of :class:`~skssl.self_training.CurriculumLabelingClassifier`
does: the labeled rows are split into folds (as :mod:`skssl.svm.defaults._penalty_check`
makes them); for each fold the estimator without safeguard is fitted with
that fold's labels hidden, and :class:`~skssl.svm.LinearL2SVC` on the other
folds' labeled rows. When the supervised model classifies more held-out
rows correctly, it is refitted on all labeled rows and replaces the
semi-supervised model; :class:`~skssl.svm.DeterministicAnnealingSVC` keeps
its model only with a lead of one standard error of the paired difference
(McNemar's). ``safeguard="auto"`` runs the check where the distinct labeled
rows outnumber the features.

Design decisions: user guide, Implementation decisions: linear S3VMs, "The cross-validated fallback check".
"""

from typing import NamedTuple

import numpy as np

from ..kernels._row_order import distinct_rows
from ..defaults._penalty_check import labeled_row_folds

__all__ = ["FoldComparison", "asks_held_out_labels", "compare_on_folds", "prefers_supervised"]


class FoldComparison(NamedTuple):
    """What the check's folds found: the two held-out accuracies and the rows on which only one model is right."""

    #: The weighted accuracy on the held-out labeled rows of the supervised and of the semi-supervised fit.
    scores: np.ndarray
    #: The weights of the held-out rows that only the supervised (``b``) and only the semi-supervised fit (``c``)
    #: classify right, McNemar's discordant pairs.
    discordant: np.ndarray


def asks_held_out_labels(safeguard, X, labeled):
    """Whether the safeguard ends with the cross-validated check.

    Parameters
    ----------
    safeguard : {"auto", "agreement", "cross_validation"} or None
        The estimator's ``safeguard``.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The rows of the fit.
    labeled : ndarray of int
        The labeled rows of positive weight.

    Returns
    -------
    bool
        ``True`` for ``"cross_validation"``, and for ``"auto"`` when the distinct labeled rows outnumber the
        features (repeats of a row count once, so that a weight and repeats give the same answer).

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.safeguard._fallback_check import asks_held_out_labels
    >>> X = np.eye(3)[[0, 1, 2, 0]]
    >>> asks_held_out_labels("auto", X, np.arange(4)), asks_held_out_labels("cross_validation", X, np.arange(4))
    (False, True)
    """
    if safeguard == "cross_validation":
        return True
    if safeguard != "auto" or labeled.size <= X.shape[1]:
        return False
    _, group = distinct_rows(X[labeled])
    return np.unique(group).size > X.shape[1]


def compare_on_folds(X, y_enc, labeled, weights, predict_semi, predict_supervised):
    """Cross-validated accuracies of the supervised and the semi-supervised fit on the labeled rows.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The rows of the fit.
    y_enc : ndarray of shape (n_samples,)
        Class indices of the labeled rows (anything on the others).
    labeled : ndarray of int
        The labeled rows of positive weight.
    weights : ndarray of shape (n_samples,)
        Row weights.
    predict_semi : callable
        ``predict_semi(hidden, test_rows)``: the class indices of ``test_rows`` predicted by the
        semi-supervised fit with the labels of the rows ``hidden`` hidden.
    predict_supervised : callable
        ``predict_supervised(train_rows, test_rows)``: those of the supervised fit on the labeled rows
        ``train_rows``.

    Returns
    -------
    comparison : FoldComparison or None
        The weighted accuracy on the held-out labeled rows of the supervised and of the semi-supervised fit
        (``scores``) and the weights of the held-out rows that only one of them classifies right
        (``discordant``); ``None`` when the labeled rows are too few for two folds.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.safeguard._fallback_check import compare_on_folds
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    >>> always_0 = lambda rows: np.zeros_like(rows)
    >>> comparison = compare_on_folds(X, y, np.arange(10), np.ones(10), lambda hidden, rows: always_0(rows),
    ...                                     lambda train, rows: y[rows])
    >>> comparison.scores.tolist(), comparison.discordant.tolist()
    ([1.0, 0.5], [5.0, 0.0])
    """
    folds = labeled_row_folds(X, y_enc, labeled, weights)
    if folds is None:
        return None
    rows, classes, row_weights, fold, labeled_fold = folds
    hits, discordant = np.zeros(2), np.zeros(2)
    for held_out in range(int(fold.max()) + 1):
        test = fold == held_out
        supervised = predict_supervised(labeled[labeled_fold != held_out], rows[test]) == classes[test]
        semi = predict_semi(labeled[labeled_fold == held_out], rows[test]) == classes[test]
        for k, (right, other) in enumerate(((supervised, semi), (semi, supervised))):
            hits[k] += np.dot(row_weights[test], right)
            discordant[k] += row_weights[test][right & ~other].sum()
    return FoldComparison(hits / row_weights.sum(), discordant)


def prefers_supervised(comparison, margin=None):
    """Whether the check returns the supervised model.

    Parameters
    ----------
    comparison : FoldComparison
        What :func:`compare_on_folds` found.
    margin : float or None, default=None
        ``None``: the supervised model when it classifies more held-out rows right (``TransductiveSVC``,
        ``PottsDeterministicAnnealingSVC``). A number: the supervised model unless the semi-supervised one
        classifies more right by more than ``margin`` standard errors of the difference, ``c - b > margin *
        sqrt(b + c)`` with ``b``, ``c`` the discordant weights (McNemar's; ``DeterministicAnnealingSVC``: 1).

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.safeguard._fallback_check import FoldComparison, prefers_supervised
    >>> ahead_by_4_of_16 = FoldComparison(np.array([0.6, 0.7]), np.array([6.0, 10.0]))
    >>> prefers_supervised(ahead_by_4_of_16), prefers_supervised(ahead_by_4_of_16, margin=1.0)
    (False, True)
    """
    if margin is None:
        return bool(comparison.scores[0] > comparison.scores[1])
    b, c = comparison.discordant
    return not c - b > margin * np.sqrt(b + c)

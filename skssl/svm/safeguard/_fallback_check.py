"""The safeguard's cross-validated check: keep the supervised l2-SVM where the held-out labels prefer it.

With ``safeguard="cross_validation"`` the labeled rows are split into folds (as
:mod:`skssl.svm.defaults._penalty_check` makes them); per fold the estimator
without safeguard is fitted with that fold's labels hidden, and
:class:`~skssl.svm.LinearL2SVC` on the other folds. The supervised model wins
when it classifies more held-out rows right (for deterministic annealing: unless
the semi-supervised lead exceeds one standard error, McNemar's).

Design decisions: user guide, Implementation decisions: linear S3VMs, "The cross-validated fallback check".
"""

from typing import NamedTuple

import numpy as np

from ..kernels._row_order import distinct_rows
from ..defaults._penalty_check import labeled_row_folds

__all__ = ["FoldComparison", "asks_held_out_labels", "compare_on_folds", "prefers_supervised"]


class FoldComparison(NamedTuple):
    """Held-out accuracies (supervised, semi-supervised) and McNemar's discordant weights ``(b, c)``."""

    scores: np.ndarray
    discordant: np.ndarray


def asks_held_out_labels(safeguard, X, labeled):
    """Whether the safeguard runs the check: always for ``"cross_validation"``; for ``"auto"`` when the
    distinct labeled rows (repeats count once) outnumber the features.

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
    """Cross-validated :class:`FoldComparison` of the two fits, or ``None`` when there are too few labels for two folds.

    ``predict_semi(hidden, test_rows)`` predicts with the labels of ``hidden`` hidden;
    ``predict_supervised(train_rows, test_rows)`` fits on the labeled ``train_rows``.

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

    ``margin=None``: when it has the higher held-out accuracy. A number: unless
    ``c - b > margin * sqrt(b + c)`` for the discordant weights (McNemar's).

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

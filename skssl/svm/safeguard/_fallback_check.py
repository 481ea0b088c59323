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
    """Held-out accuracies (supervised, semi-supervised) and McNemar's discordant weights ``(b, c)``.

    ``n_fitted`` of the ``n_folds`` folds were fitted (all of them unless the check stopped once the rest could not
    change its outcome); the accuracies and weights are those of the held-out rows of the folds fitted.
    """

    scores: np.ndarray
    discordant: np.ndarray
    n_fitted: int = 0
    n_folds: int = 0


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


def compare_on_folds(X, y_enc, labeled, weights, predict_semi, predict_supervised, *, until_settled=False, margin=None):
    """Cross-validated :class:`FoldComparison` of the two fits, or ``None`` when there are too few labels for two folds.

    ``predict_semi(hidden, test_rows)`` predicts with the labels of ``hidden`` hidden;
    ``predict_supervised(train_rows, test_rows)`` fits on the labeled ``train_rows``. The supervised folds are
    fitted first; with ``until_settled`` the semi-supervised ones stop at the first fold after which
    :func:`prefers_supervised` at ``margin`` decides the same whatever the folds left would hold.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.safeguard._fallback_check import compare_on_folds
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    >>> always_0 = lambda rows: np.zeros_like(rows)
    >>> comparison = compare_on_folds(X, y, np.arange(10), np.ones(10), lambda hidden, rows: always_0(rows),
    ...                                     lambda train, rows: y[rows])
    >>> comparison.scores.tolist(), comparison.discordant.tolist(), comparison.n_fitted
    ([1.0, 0.5], [5.0, 0.0], 5)
    >>> compare_on_folds(X, y, np.arange(10), np.ones(10), lambda hidden, rows: always_0(rows),
    ...                  lambda train, rows: y[rows], until_settled=True).n_fitted  # 1 of the 5 folds settles it
    1
    """
    folds = labeled_row_folds(X, y_enc, labeled, weights)
    if folds is None:
        return None
    rows, classes, row_weights, fold, labeled_fold = folds
    n_folds = int(fold.max()) + 1
    tests = [fold == held_out for held_out in range(n_folds)]
    supervised = [
        predict_supervised(labeled[labeled_fold != held_out], rows[test]) == classes[test]
        for held_out, test in enumerate(tests)
    ]
    # Weight of the held-out rows of each fold that the supervised model gets right and wrong: the most that
    # fold can add to b and to c.
    right = np.array([np.dot(row_weights[test], sup) for test, sup in zip(tests, supervised)])
    # (A fold's total and its dot product round differently: all right left a negative wrong weight, and NaN.)
    wrong = np.maximum(np.array([row_weights[test].sum() for test in tests]) - right, 0.0)
    hits, discordant, total = np.zeros(2), np.zeros(2), 0.0
    for held_out, (test, sup) in enumerate(zip(tests, supervised)):
        semi = predict_semi(labeled[labeled_fold == held_out], rows[test]) == classes[test]
        w = row_weights[test]
        hits += np.dot(w, sup), np.dot(w, semi)
        discordant += w[sup & ~semi].sum(), w[semi & ~sup].sum()
        total += w.sum()
        left = slice(held_out + 1, n_folds)
        if until_settled and _settled(hits, discordant, right[left].sum(), wrong[left].sum(), right.sum(), margin):
            break
    n_fitted = held_out + 1
    return FoldComparison(hits / total, discordant, n_fitted, n_folds)


#: Slack of the settled test, relative to the labeled weight: a tie within rounding is never called settled.
_SETTLE_SLACK = 1e-9


def _settled(hits, discordant, right_left, wrong_left, supervised_hits, margin):
    """Whether :func:`prefers_supervised` decides the same for every outcome of the folds left.

    ``right_left`` and ``wrong_left`` are the weights of those folds' held-out rows that the supervised model
    gets right and wrong (the most they can add to ``b`` and to ``c``), ``supervised_hits`` its hits on all folds.
    """
    slack = _SETTLE_SLACK * (supervised_hits + wrong_left + hits[0] + 1.0)
    if margin is None:  # falls back when the supervised model has more hits
        semi_lowest, semi_highest = hits[1], hits[1] + right_left + wrong_left
        return bool(supervised_hits - semi_highest > slack or semi_lowest - supervised_hits > slack)
    b, c = discordant
    # g(b, c) = c - b - margin sqrt(b + c) keeps the semi-supervised model when positive. It falls with b and is
    # convex in c, least where b + c = margin^2 / 4: its extremes over the folds left are at these points.
    b_high = b + right_left
    c_points = np.array([c, c + wrong_left, np.clip(margin**2 / 4 - b_high, c, c + wrong_left)])

    def g(b_value, c_values):
        return c_values - b_value - margin * np.sqrt(b_value + c_values)

    return bool(g(b, c_points[:2]).max() < -slack or g(b_high, c_points).min() > slack)


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

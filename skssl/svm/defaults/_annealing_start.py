"""``initial_temperature="auto"``: start the binary annealing hot, as SVMlin does, or cold, by a check on the labels.

Deterministic annealing (Sindhwani, Keerthi & Chapelle, ICML 2006) starts hot;
a cold start (``0.1``) stays near the supervised weights. The labeled rows are
split into two stratified halves; each half's labels are hidden and the
estimator is fitted from both starts. The cold start is kept when it labels
at least ``MIN_MORE_CORRECT`` more hidden rows right. Binary, ``alpha="auto"`` only.

Design decisions: user guide, Implementation decisions: linear S3VMs, "The annealing start".
"""

import numpy as np
from sklearn.base import clone

from ...utils._labeled_folds import fold_splits, stratified_fold_ids
from ..solvers._annealing import DA_INIT_TEMP
from ..kernels._row_order import distinct_rows

__all__ = [
    "COLD_START",
    "HOT_START",
    "MIN_MORE_CORRECT",
    "choose_initial_temperature",
    "count_correct_on_hidden_halves",
    "given_or_hot",
    "label_check_halves",
    "start_from_counts",
]

#: SVMlin's start: the first temperature over ``unlabeled_weight``.
HOT_START = DA_INIT_TEMP
#: The cold start: beliefs that follow the supervised weights at once.
COLD_START = 0.1
#: Hidden labeled rows the cold start must label correctly beyond the hot start's count to be chosen.
MIN_MORE_CORRECT = 2


def _content_order(X, rows):
    """``rows`` in an order of their values, independent of row position and of the scale of ``X``."""
    _, group = distinct_rows(X[rows])
    return rows[np.argsort(group, kind="stable")]


def label_check_halves(y_enc, labeled, X=None):
    """Two stratified halves of ``labeled`` (empty when a class has fewer than two rows).

    With ``X`` the halves are drawn in the rows' content order, so that reordered or rescaled rows get the same.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.defaults._annealing_start import label_check_halves
    >>> y = np.array([0, 0, 1, 1, 0, 1, 0, 1])
    >>> halves = label_check_halves(y, np.arange(8))
    >>> [np.bincount(y[h]).tolist() for h in halves]  # two of each class in each half
    [[2, 2], [2, 2]]
    >>> sorted(np.concatenate(halves).tolist()) == list(range(8))
    True
    >>> label_check_halves(y, np.arange(3))
    []
    """
    if np.unique(y_enc[labeled], return_counts=True)[1].min() < 2:
        return []
    if X is not None:
        labeled = _content_order(X, labeled)
    half = stratified_fold_ids(y_enc[labeled], 2, dealt=False, seed=0)
    return [np.sort(labeled[held]) for _, held in fold_splits(half)]


def count_correct_on_hidden_halves(estimator, rows, fractions):
    """Hidden labeled rows labeled right from each start: ``{HOT_START: n, COLD_START: n}``, or ``None``.

    ``rows`` is the fit's backend view that fits the clones; ``None`` where the check is skipped. The hot start
    is fitted on both halves first; the cold start's fits stop once :func:`start_from_counts` decides the same
    whatever the halves left would add (:func:`_cold_start_settled`), so its count may cover the first half only.
    """
    if estimator.classes_.shape[0] != 2 or not isinstance(estimator.alpha, str):
        return None
    if rows.n_unlabeled == 0:
        return None
    y_enc, X = rows.y_enc, rows.X
    halves = label_check_halves(y_enc, rows.labeled, X)
    if not halves:
        return None
    fraction = estimator.positive_fraction if estimator.positive_fraction is not None else float(fractions[1])
    # The parent's alpha factor and k-means are handed down, not worked out again.
    given = estimator._label_check_given(rows.clusters)
    correct = {HOT_START: 0, COLD_START: 0}
    for start in correct:  # the hot start first, on both halves
        for i, held in enumerate(halves):
            if start == COLD_START and _cold_start_settled(correct, sum(half.size for half in halves[i:])):
                return correct
            check = clone(estimator).set_params(
                initial_temperature=start,
                positive_fraction=fraction,
                class_weight=estimator._encoded_class_weight(),
                safeguard=None,
                verbose=0,
            )
            check = rows.fit_hiding(check, held, given)
            correct[start] += int(np.count_nonzero(check._predicted_indices(X[held]) == y_enc[held]))
    return correct


def _cold_start_settled(correct, n_left):
    """Whether the cold start's fits on ``n_left`` more hidden rows could not change :func:`start_from_counts`.

    ``correct`` holds the hot start's full count and the cold start's so far, which grows by at most ``n_left``.
    """
    highest = {**correct, COLD_START: correct[COLD_START] + n_left}
    return start_from_counts(correct) == start_from_counts(highest)


def start_from_counts(correct):
    """The start the counts choose: the cold one only with ``MIN_MORE_CORRECT`` more rows right.

    Examples
    --------
    >>> from skssl.svm.defaults._annealing_start import COLD_START, HOT_START, start_from_counts
    >>> start_from_counts({HOT_START: 30, COLD_START: 32})
    0.1
    >>> start_from_counts({HOT_START: 30, COLD_START: 31})
    10.0
    >>> start_from_counts(None)
    10.0
    """
    if correct is None or correct[COLD_START] < correct[HOT_START] + MIN_MORE_CORRECT:
        return HOT_START
    return COLD_START


def choose_initial_temperature(estimator, rows, fractions):
    """``HOT_START`` or ``COLD_START`` for a DA fit with ``initial_temperature="auto"`` (see the module)."""
    correct = count_correct_on_hidden_halves(estimator, rows, fractions)
    start = start_from_counts(correct)
    if estimator.verbose and correct is not None:
        print(
            f"[{type(estimator).__name__}] start: with half of the labels hidden in turn, the hot start labels "
            f"{correct[HOT_START]} of them right, the cold start {correct[COLD_START]} (its fits stop once the "
            f"halves left could not change the start); initial_temperature={start}"
        )
    return start


def given_or_hot(initial_temperature):
    """A given ``initial_temperature`` as a float; ``"auto"`` without the label check: SVMlin's hot start."""
    return HOT_START if initial_temperature == "auto" else float(initial_temperature)

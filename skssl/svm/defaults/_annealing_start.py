"""``initial_temperature="auto"``: start the binary annealing hot, as SVMlin does, or cold, by a check on the labels.

Deterministic annealing (Sindhwani, Keerthi & Chapelle, ICML 2006) starts
hot, where the path can reach the lowest objective anywhere; a cold start
(``0.1`` in units of ``unlabeled_weight``) stays near the supervised
weights. The labeled rows decide between them:

1. the labeled rows of positive weight are split into two stratified halves
   (in the content order of :mod:`skssl.svm.kernels._row_order`);
2. for each half, its labels are hidden and the estimator, without
   safeguard, is fitted from both starts; each fit labels the hidden half;
3. the cold start is kept when it labels at least ``MIN_MORE_CORRECT`` (2)
   more hidden rows correctly, otherwise SVMlin's hot start.

Binary problems with ``alpha="auto"`` only; a number skips the check.

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
    """``rows`` in an order of their values (:func:`skssl.svm.kernels._row_order.distinct_rows`).

    It depends neither on where the rows are nor on the scale of ``X`` (a positive factor keeps the order).
    """
    _, group = distinct_rows(X[rows])
    return rows[np.argsort(group, kind="stable")]


def label_check_halves(y_enc, labeled, X=None):
    """The two stratified halves of the labeled rows whose labels the check hides in turn.

    Parameters
    ----------
    y_enc : ndarray of shape (n_samples,)
        Encoded labels (class indices) of the labeled rows.
    labeled : ndarray of int
        The labeled rows (of positive weight) that take part.
    X : {ndarray, CSR matrix} of shape (n_samples, n_features), default=None
        The rows: when given, the halves are drawn over the labeled rows in
        an order of their values, so that the same rows in another order, or
        all multiplied by one positive number, get the same halves (and the
        fit the same model).

    Returns
    -------
    halves : list of ndarrays of int
        Two arrays of row indices; empty when some class has fewer than two labeled rows.

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

    ``estimator`` (its ``classes_`` set) is cloned; ``rows`` is the fit's view of its rows on its backend
    (``skssl.svm._base._RowsInMemory`` or the Dask fit's), which fits the clones with a half's labels hidden;
    ``fractions`` the fit's class fractions. ``None`` where the check is skipped: a multi-class problem, no
    unlabeled row of positive weight, or a class with fewer than two labeled rows of positive weight.
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
    # Fitted on the estimator's rows: its factor of alpha="auto" and the k-means of its rows are not worked out
    # again, and the checks' caps say nothing of the model the user gets.
    given = estimator._label_check_given(rows.clusters)
    correct = {HOT_START: 0, COLD_START: 0}
    for held in halves:
        for start in correct:
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


def start_from_counts(correct):
    """The start the counts choose: the cold one only with ``MIN_MORE_CORRECT`` more rows right.

    Parameters
    ----------
    correct : dict or None
        As returned by :func:`count_correct_on_hidden_halves`.

    Returns
    -------
    initial_temperature : float

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
    """``HOT_START`` or ``COLD_START`` for a DA fit with ``initial_temperature="auto"`` (see the module).

    Parameters
    ----------
    estimator, rows, fractions
        As for :func:`count_correct_on_hidden_halves`.

    Returns
    -------
    initial_temperature : float
    """
    correct = count_correct_on_hidden_halves(estimator, rows, fractions)
    start = start_from_counts(correct)
    if estimator.verbose and correct is not None:
        print(
            f"[{type(estimator).__name__}] start: with half of the labels hidden in turn, the hot start labels "
            f"{correct[HOT_START]} of them right, the cold start {correct[COLD_START]}; initial_temperature={start}"
        )
    return start


def given_or_hot(initial_temperature):
    """A given ``initial_temperature`` as a float; ``"auto"`` without the label check: SVMlin's hot start."""
    return HOT_START if initial_temperature == "auto" else float(initial_temperature)

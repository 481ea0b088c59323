"""The labeled rows' check of ``alpha="auto"``: a lighter penalty where they clearly call for one.

``alpha="auto"`` sets the penalty by a rule (:mod:`skssl.svm.defaults._regularization`)
that shrinks away directions of little variance, where the classes of
nearly collinear measurements lie. Before a fit uses the rule's value, the
supervised l2-SVM is cross-validated on the labeled rows at the rule's
value and at a tenth and a hundredth of it; a lighter value is taken only
when it classifies the held-out rows better by more than one standard
error (the one-standard-error rule of Breiman, Friedman, Olshen & Stone,
*Classification and Regression Trees*, 1984). The semi-supervised
estimators use the rule's value times the chosen factor. The folds deal the
distinct labeled rows class by class in the content order of
:mod:`skssl.svm.kernels._row_order`, so they depend neither on the rows' order nor
on repetition.

Design decisions: user guide, Implementation decisions: linear S3VMs, "The labeled rows' check of alpha".
"""

import numpy as np

from ...utils._labeled_folds import stratified_fold_ids
from ..kernels._row_order import distinct_rows
from ..kernels._validation import on_used_columns

__all__ = [
    "MAX_CHECKED_LABELED",
    "PENALTY_FACTORS",
    "labeled_row_folds",
    "labeled_rows_penalty_factor",
    "one_standard_error_choice",
]

#: The factors of the rule's ``alpha`` that the labeled rows are asked about, the rule's own (1) first.
PENALTY_FACTORS = (1.0, 0.1, 0.01)
#: Folds of the check (fewer when the smallest class has fewer distinct labeled rows).
N_FOLDS = 5
#: Above this many labeled rows the rule's value is used without the check.
MAX_CHECKED_LABELED = 10_000


def one_standard_error_choice(accuracies, n_labeled):
    """Index of the first candidate whose accuracy is within one standard error of the best.

    ``accuracies`` are cross-validated, most regularized candidate first;
    ``n_labeled`` is the number (or weight) of labeled rows behind them.

    Examples
    --------
    >>> from skssl.svm.defaults._penalty_check import one_standard_error_choice
    >>> one_standard_error_choice([0.82, 0.84, 0.85], 100)  # a standard error of 0.036: all within it
    0
    >>> one_standard_error_choice([0.50, 0.88, 0.90], 100)  # 0.03: the second is within it
    1
    """
    accuracies = np.asarray(accuracies, dtype=np.float64)
    best = accuracies.max()
    share = min(max(best, 0.0), 1.0)  # a weighted ratio can round past 1
    spread = np.sqrt(share * (1.0 - share) / n_labeled)
    return int(np.flatnonzero(accuracies >= best - spread)[0])


def labeled_row_folds(X, y_enc, labeled, weights):
    """``(rows, classes, row_weights, fold, labeled_fold)`` of the distinct labeled rows, or ``None`` when too few
    for 2 folds. ``rows`` holds one labeled row per distinct (row, class) pair, ``row_weights`` the summed weights
    of its repeats, ``fold`` its fold; ``labeled_fold`` is the fold of each row of ``labeled``."""
    _, group = distinct_rows(X[labeled])
    n_classes = int(y_enc.max()) + 1
    # The groups of distinct_rows number the contents in their order; with the class, one key per distinct pair.
    key = group.astype(np.int64) * n_classes + y_enc[labeled]
    keys, representative, inverse = np.unique(key, return_index=True, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=weights[labeled], minlength=keys.shape[0])
    classes = keys % n_classes
    per_class = np.bincount(classes, minlength=n_classes)
    n_folds = min(N_FOLDS, int(per_class[per_class > 0].min()))
    if n_folds < 2:
        return None
    # Dealt class by class in key order, which is content order: keys sort by content rank first.
    fold = stratified_fold_ids(classes, n_folds, dealt=True)
    return labeled[representative], classes, summed, fold, fold[inverse.ravel()]


def labeled_rows_penalty_factor(
    X, y_enc, mask, weights, alpha, intercept_scaling, class_weight=None, n_jobs=None, *, supervised
):
    """The factor of the rule's ``alpha`` that the labeled rows support (one of :data:`PENALTY_FACTORS`).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The rows of the fit (float64; CSR when sparse).
    y_enc : ndarray of shape (n_samples,)
        Class indices ``0 .. n_classes - 1`` of the labeled rows (anything on the others).
    mask : ndarray of bool of shape (n_samples,)
        Labeled rows.
    weights : ndarray of shape (n_samples,)
        Row weights (counts); rows of weight 0 take no part.
    alpha : float
        The supervised rule's ``alpha`` for the labeled rows (``mean |x_i|^2 / n_labeled``).
    intercept_scaling : float
        The fit's ``intercept_scaling_``.
    class_weight : dict, "balanced" or None, default=None
        The fit's class weights, keyed by class index.
    n_jobs : int, default=None
        Threads of the supervised fits.
    supervised : callable
        ``supervised(X, y, sample_weight, **params)`` returns the ``predict`` of the supervised l2-SVM
        (:class:`~skssl.svm.LinearL2SVC`) with ``params`` fitted on rows of ``X``; handed in by the estimator.

    Returns
    -------
    factor : float
    """
    labeled = np.flatnonzero(mask & (weights > 0))
    if labeled.shape[0] > MAX_CHECKED_LABELED or np.unique(y_enc[labeled]).shape[0] < 2:
        return 1.0
    folds = labeled_row_folds(X, y_enc, labeled, weights)
    if folds is None:
        return 1.0
    rows, classes, row_weights, fold, _ = folds
    n_folds = int(fold.max()) + 1
    # The labeled rows on the columns they use: the models are 0 on the others (skssl.svm.kernels._validation).
    X_rows = on_used_columns(X[rows])[0]
    hits = np.zeros(len(PENALTY_FACTORS))
    for held_out in range(n_folds):
        train, test = fold != held_out, fold == held_out
        if np.unique(classes[train]).shape[0] < 2:
            return 1.0
        X_train, X_test = X_rows[np.flatnonzero(train)], X_rows[np.flatnonzero(test)]
        for i, factor in enumerate(PENALTY_FACTORS):
            predict = supervised(
                X_train,
                classes[train],
                row_weights[train],
                alpha=alpha * factor,
                intercept_scaling=intercept_scaling,
                class_weight=class_weight,
                n_jobs=n_jobs,
            )
            hits[i] += np.dot(row_weights[test], predict(X_test) == classes[test])
    total = row_weights.sum()
    return PENALTY_FACTORS[one_standard_error_choice(hits / total, total)]

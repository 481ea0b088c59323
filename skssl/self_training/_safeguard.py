"""Cross-validated safeguard of Curriculum Labeling: keep the curriculum only where it helps.

Self-training trains every round on the previous round's guesses; where
those are poor the rounds amplify the errors and the final model can fall
far below the supervised model of round 0. The safeguard splits the labeled
rows into ``min(3, smallest labeled class)`` stratified folds (unshuffled),
runs the whole curriculum with each fold held out, and counts the held-out
rows that round 0's model and the curriculum's model classify correctly.
The curriculum's model is kept when it classifies at least as many;
otherwise the supervised model of the full fit is returned. Where a fold
would lose a class, ``safeguard_scores_`` is ``None`` and nothing changes.

Design decisions: user guide, Implementation decisions (deep, self-training), "The safeguard of Curriculum Labeling".
"""

import time

import numpy as np
from sklearn.base import clone
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _check_method_params

from ..utils._labeled_folds import fold_splits, stratified_fold_ids

__all__ = ["MAX_FOLDS", "cross_validated_scores"]

#: Number of folds of the safeguard when every class has at least this many labeled rows.
MAX_FOLDS = 3


def _labeled_folds(y_labeled):
    """Stratified folds ``(train, held_out)`` of the labeled rows, or ``None`` when they cannot judge."""
    counts = np.bincount(y_labeled)
    counts = counts[counts > 0]
    n_splits = int(min(MAX_FOLDS, max(2, counts.min())))
    if y_labeled.shape[0] < 2 * n_splits or counts.max() < n_splits:
        return None
    folds = fold_splits(stratified_fold_ids(y_labeled, n_splits, dealt=False))
    if any(np.unique(y_labeled[train]).shape[0] < 2 for train, _ in folds):
        return None
    return folds


def validation_holds_out_a_row(y_labeled, fraction, weight=None):
    """Whether ``validation_fraction=fraction`` holds out one of these labeled rows.

    It holds out ``floor(fraction n_k)`` of the ``n_k`` rows of class ``k`` that have a positive weight.
    """
    if fraction is None:
        return True
    y_labeled = y_labeled if weight is None else y_labeled[weight > 0]
    _, counts = np.unique(y_labeled, return_counts=True)
    return bool(np.any(np.floor(fraction * counts) > 0))


def cross_validated_scores(curriculum, X, y, labeled_rows, y_labeled, sample_weight, fit_params, row_weight, seed):
    """Held-out accuracy of the supervised model and of the curriculum's model, summed over folds.

    Parameters
    ----------
    curriculum : CurriculumLabelingClassifier
        The estimator being fitted; each fold fits a clone with ``safeguard=None``.
    X, y : the training data as passed to ``fit`` (``y`` with ``-1`` for unlabeled rows).
    labeled_rows : ndarray of int
        Positions of the labeled rows.
    y_labeled : ndarray of int
        Encoded labels of ``labeled_rows``.
    sample_weight, fit_params :
        ``fit``'s arguments, cut to each fold's rows.
    row_weight : ndarray or None
        Weights of the rows that reach the estimator (weigh the held-out counts).
    seed : int
        ``random_state`` of the folds' curricula.

    Returns
    -------
    scores : ndarray of shape (2,) or None
        Accuracy of round 0 and of the curriculum on the held-out labeled rows;
        ``None`` when the labeled rows cannot be split into folds that each
        train on two classes or more.
    """
    folds = _labeled_folds(y_labeled)
    if folds is None:
        return None
    correct = np.zeros(2)
    total = 0.0
    all_rows = np.arange(y.shape[0])
    for fold, (train, held_out) in enumerate(folds, 1):
        fold_start = time.monotonic()
        held_rows = labeled_rows[held_out]
        keep = np.setdiff1d(all_rows, held_rows, assume_unique=True)
        inner = clone(curriculum).set_params(safeguard=None, verbose=0, random_state=seed)
        train_weight = None if row_weight is None else row_weight[labeled_rows[train]]
        if not validation_holds_out_a_row(y_labeled[train], curriculum.validation_fraction, train_weight):
            inner.set_params(validation_fraction=None)
        inner._keep_round0_estimator = True
        # a scalar weight (every row alike) passes as it is
        inner_weight = sample_weight if np.ndim(sample_weight) == 0 else np.asarray(sample_weight)[keep]
        inner.fit(
            _safe_indexing(X, keep),
            y[keep],
            sample_weight=inner_weight,
            **_check_method_params(X, fit_params, indices=keep),
        )
        X_held = _safe_indexing(X, held_rows)
        truth = curriculum.classes_[y_labeled[held_out]]
        weight = np.ones(held_rows.shape[0]) if row_weight is None else row_weight[held_rows]
        supervised = inner.classes_[inner._indices(inner._round0_estimator, X_held)]
        correct[0] += np.sum(weight * (supervised == truth))
        correct[1] += np.sum(weight * (inner.predict(X_held) == truth))
        total += weight.sum()
        if curriculum.verbose:
            print(
                f"[CurriculumLabeling] safeguard fold {fold}/{len(folds)}: {inner.n_iter_} rounds on "
                f"{keep.shape[0]} rows, {held_rows.shape[0]} labeled rows held out "
                f"({time.monotonic() - fold_start:.1f}s)"
            )
    return correct / total if total > 0 else None

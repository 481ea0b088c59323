"""The safeguard of the semi-supervised SVMs: follow the unlabeled rows only where their answer is stable.

A semi-supervised SVM assumes that the classes are separated by a region
of low density. Where that is false, its low-density separator can be far
worse than the supervised SVM fitted on the labeled rows alone. Li & Zhou
("Towards Making Unlabeled Data Never Hurt", IEEE TPAMI 2015, S4VM) make
the answer safe by generating several candidate low-density separators and
changing the supervised prediction of an unlabeled row only where the
candidates agree on it. skssl's safeguard (``safeguard="agreement"``) does
the same with candidates that differ in what the labeled rows know least,
the class fractions:

1. The semi-supervised fit at the class fractions ``f`` estimated from the
   labeled rows (``positive_fraction=None``), and two more fits at ``f`` moved by one
   standard error of that estimate, ``s_k = sqrt(f_k (1 - f_k) / l)``
   (``l`` labeled rows): ``f + s`` and ``f - s`` for a binary problem (the
   fraction of the positive class); for several classes the two vectors
   are clipped and renormalized to sum to 1 (a flatter and a sharper class
   distribution).
2. The supervised :class:`~skssl.svm.LinearL2SVC` (same ``alpha`` and
   ``class_weight``) predicts the unlabeled rows.
3. Each unlabeled row gets the label of the three candidates where all
   three agree, else the supervised label.
4. The returned model is the l2-SVM fitted to the labeled rows and the
   unlabeled rows with these labels: the semi-supervised objective with the
   labels fixed (the same ``alpha``, ``unlabeled_weight``, sample and class
   weights), one supervised solve.

Where the low-density separator is well determined, the candidates agree
almost everywhere and the model is the semi-supervised one; where it
depends on the class fractions, which a few labels cannot pin down, the
model stays with the supervised labels there.

Cost: two more semi-supervised fits and two supervised solves (one on the
labeled rows, one on all rows), about 3 times the CPU of a fit without the
safeguard; ``safeguard=None`` turns it off and returns the semi-supervised
fit as SVMlin does.

Decisions
---------
* **Why the class fractions.** They are the one input of these solvers
  that a few labels estimate badly (with 20 labels the standard error of a
  fraction of 0.3 is 0.1), and TSVM and DA enforce them exactly on the
  unlabeled rows. Changing them moves a separator that sits in a density
  gap little and one that does not a lot.
* **Measured against a cross-validated safeguard** (keep the
  semi-supervised model when it classifies at least as many held-out
  labeled rows as the supervised one, 5 folds): on the development sets of
  ``benchmarks/user_value.py`` (TSVM, ``alpha="auto"``, 3 label draws) the
  mean gain over the better of ``LogisticRegression`` and ``LinearSVC`` was
  +0.07 points with no safeguard, -0.19 with the cross-validated one and
  +0.12 with this one; the worst data set -8.9, -8.9 and -5.2 points. With
  10 to 50 labels the held-out folds are too small to rank two models.
* **Only estimated fractions are varied.** A ``positive_fraction`` given
  by the user is taken as known and the safeguard does nothing: on pcmac
  with its true balance (SVMlin's reference run, ``positive_fraction=0.5``)
  the refit with the spread of 50 labels cost 2.7 points of test accuracy
  (92.8% to 90.1%).
* **A row of weight 0** takes no part: it has no vote and no label.
* The three candidates' labels are compared as the estimator's predictions
  (``argmax`` over the classes), so one-vs-rest and Potts models are
  treated alike.
"""

import numpy as np

__all__ = ["candidate_fractions", "safe_labels"]

#: Class fractions of the candidates are kept within [FRACTION_FLOOR, 1 - FRACTION_FLOOR].
FRACTION_FLOOR = 1e-3


def candidate_fractions(fractions, n_labeled):
    """The class fractions of the two extra candidates: ``f`` moved by one standard error each way.

    Parameters
    ----------
    fractions : ndarray of shape (n_classes,)
        Class fractions of the unlabeled rows (summing to 1).
    n_labeled : float
        Number (or total weight) of the labeled rows behind the estimate.

    Returns
    -------
    candidates : list of two ndarrays of shape (n_classes,)
        Each positive and summing to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm._safeguard import candidate_fractions
    >>> [c.round(3).tolist() for c in candidate_fractions(np.array([0.6, 0.4]), 24)]
    [[0.5, 0.5], [0.7, 0.3]]
    """
    fractions = np.asarray(fractions, dtype=np.float64)
    spread = np.sqrt(fractions * (1.0 - fractions) / n_labeled)
    out = []
    for sign in (+1.0, -1.0):
        if fractions.shape[0] == 2:
            positive = np.clip(fractions[1] + sign * spread[1], FRACTION_FLOOR, 1.0 - FRACTION_FLOOR)
            out.append(np.array([1.0 - positive, positive]))
        else:
            moved = np.clip(fractions + sign * spread, FRACTION_FLOOR, 1.0 - FRACTION_FLOOR)
            out.append(moved / moved.sum())
    return out


def safe_labels(candidate_predictions, supervised_prediction):
    """Labels of the unlabeled rows: the candidates' where they all agree, else the supervised one's.

    Parameters
    ----------
    candidate_predictions : list of ndarrays of shape (n_unlabeled,)
        Predicted class indices of each candidate.
    supervised_prediction : ndarray of shape (n_unlabeled,)
        Predicted class indices of the supervised model.

    Returns
    -------
    labels : ndarray of shape (n_unlabeled,)
    agree : ndarray of bool of shape (n_unlabeled,)
        Rows where the candidates agree.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm._safeguard import safe_labels
    >>> labels, agree = safe_labels([np.array([0, 1, 1]), np.array([0, 1, 0])], np.array([1, 0, 0]))
    >>> labels.tolist(), agree.tolist()
    ([0, 1, 0], [True, True, False])
    """
    first = candidate_predictions[0]
    agree = np.ones(first.shape[0], dtype=bool)
    for other in candidate_predictions[1:]:
        agree &= other == first
    return np.where(agree, first, supervised_prediction), agree

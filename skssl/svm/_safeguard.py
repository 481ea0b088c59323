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
   labeled rows (``positive_fraction=None``; or the clusters' shares, where
   :mod:`skssl.svm._cluster_fractions` takes them), and two more fits at ``f`` moved by one
   standard error of that estimate, ``s_k = sqrt(f_k (1 - f_k) / l)``
   (``l`` labeled rows): ``f + s`` and ``f - s`` for a binary problem (the
   fraction of the positive class); for several classes the two vectors
   are clipped and renormalized to sum to 1 (a flatter and a sharper class
   distribution). A fourth candidate reaches the same objective at ``f``
   by a second optimizer (the estimator's ``_second_opinion``): for
   deterministic annealing (``DeterministicAnnealingSVC`` and
   ``PottsDeterministicAnnealingSVC``), ``TransductiveSVC`` with the same
   ``alpha_``, ``intercept_scaling_``, ``unlabeled_weight`` and class
   weights (label switching instead of annealing); for ``TransductiveSVC``,
   itself without SVMlin's annealing of ``lam_u`` (the switching starts at
   the full ``unlabeled_weight`` instead of 1e-5).
2. Each unlabeled row on which all candidates predict the same class
   keeps that label; the rows they dispute are left out.
3. The returned model is the l2-SVM fitted to the labeled rows and the
   agreed unlabeled rows with these labels: the semi-supervised objective
   with the labels fixed (the same ``alpha``, ``unlabeled_weight``, sample
   and class weights, the unlabeled mean over the agreed rows), one
   supervised solve. With more than two classes on centred
   (standardized) rows that solve fits all classes jointly (the squared loss of Weston & Watkins,
   :mod:`skssl.svm._weston_watkins`) rather than one class against the
   rest, so that a class lying between two others keeps its rows.

Where the low-density separator is well determined, the candidates agree
almost everywhere and the model is the semi-supervised one; where it
depends on the class fractions, which a few labels cannot pin down, the
rows it would move take no part and the labeled rows decide there.

Cost: two more semi-supervised fits, the second opinion (a fraction of
one fit: TSVM without annealing, or TSVM beside an annealing fit) and one
supervised solve on the labeled and agreed rows, about 3 times the CPU of
a fit without the safeguard; ``safeguard=None`` turns it off and returns
the semi-supervised fit as SVMlin does.

Decisions
---------
* **Why the class fractions.** They are the one input of these solvers
  that a few labels estimate badly (with 20 labels the standard error of a
  fraction of 0.3 is 0.1), and TSVM and DA enforce them exactly on the
  unlabeled rows. Changing them moves a separator that sits in a density
  gap little and one that does not a lot.
* **One standard error, not two.** Candidates at ``f +- 2 s`` (a 95%
  interval rather than 68%) were measured on ``benchmarks/user_value.py``
  (TSVM, 3 draws, gain over the better of ``LogisticRegression`` and
  ``LinearSVC``): on the development sets with stratified label draws the
  mean fell from +1.04 to +0.89 (iris +1.5 -> -0.7), and with labels drawn
  uniformly at random, where the estimated fractions are further off, from
  +0.94 to +0.89 (wheat seeds -2.6 -> -4.2, though haberman -1.8 -> -0.7
  and breast cancer -1.2 -> +0.8). Wider candidates dispute more of the
  rows that the low-density separator does determine.
* **Disputed rows left out** rather than given the supervised label
  (S4VM's choice for them, and this module's first version). On the development sets of
  ``benchmarks/user_value.py`` (TSVM, ``alpha="auto"``, 3 label draws; gain
  over the better of ``LogisticRegression`` and ``LinearSVC``, wins / ties
  / losses at one point) no safeguard gave +0.07 points on average
  (8 / 6 / 5, worst -8.9), the supervised label +0.11 (5 / 9 / 5, worst
  -5.2) and leaving them out +0.40 (7 / 8 / 4, worst -6.7). On pcmac with
  SVMlin's draw of 50 labels (21 positive: an estimated fraction of 0.42
  for a balanced task) the supervised labels, 65% right, took TSVM from
  87.9% to 77.4% test accuracy; leaving the rows out keeps 87.9%.
* **Measured against a cross-validated safeguard** (keep the
  semi-supervised model when it classifies at least as many held-out
  labeled rows as the supervised one, 5 folds): mean gain -0.19 on the same
  sets, worst -8.9. With 10 to 50 labels the held-out folds are too small
  to rank two models.
* **Only estimated fractions are varied.** A ``positive_fraction`` given
  by the user is taken as known and the safeguard does nothing: on pcmac
  with its true balance (SVMlin's reference run, ``positive_fraction=0.5``)
  the refit with the spread of 50 labels cost 2.7 points of test accuracy
  (92.8% to 90.1%).
* **TSVM as a second optimizer for deterministic annealing.** Candidates
  that differ only in the class fractions share their failures: on movie
  reviews (100 labels, first draw) the three annealing candidates agreed on
  90% of the rows and on a separator 8.5 points below ``LinearSVC``, a
  split of the reviews by topic rather than polarity that the annealing
  reaches at every fraction. TSVM's label switching, started from the
  supervised solution, ends elsewhere on such data, and the rows where the
  two optimizers of the same objective disagree are the rows the objective
  does not determine (S4VM's argument for several diverse candidates). On
  the development sets of ``benchmarks/user_value.py`` (3 draws, gain over
  the better of ``LogisticRegression`` and ``LinearSVC``) DA went from 3
  losses of more than a point to 1 (movie reviews -1.6 -> -0.3, sentence
  polarity -1.5 -> -0.8; haberman -1.1 unchanged) and Potts DA from 1 to
  none (iris -2.2 -> -0.7); it costs DA 1.7 points on 20 Newsgroups binary
  (78.4% -> 76.7%, still above ``LinearSVC``'s 75.8%), where the annealing
  finds a lower objective than TSVM.
* **TSVM without the annealing of lam_u as TSVM's second optimizer**,
  rather than the annealing: on the benchmark's sets a default annealing
  fit costs 1.5 to 13 times a default TSVM fit (median 5). SVMlin raises
  ``lam_u`` from 1e-5, so the switching starts where the supervised
  solution leads; started at the full weight it lands elsewhere where the
  objective has several minima. On 20 Newsgroups binary (first draw) it
  reaches 77.0% test accuracy against 73.2% for SVMlin's schedule (at a
  higher objective, 0.108 against 0.0895) in 1.1 CPU s against 6.0. On the
  development sets TSVM went from 6 / 11 / 2, mean +0.98, to 6 / 12 / 1,
  +1.04 (sentence polarity -1.5 -> -0.7, 20 Newsgroups binary -2.6 ->
  -1.9; worse: soybean -0.3, pcmac -0.2), on the held-out sets from
  5 / 3 / 3, +2.01, to 5 / 4 / 2, +1.97 (glass -1.1 -> -0.5; subjectivity
  -0.5).
* **Weights.** TSVM switches rows, not weight, so with the fourth
  candidate integer ``sample_weight`` no longer gives exactly the model of
  duplicated rows for the annealing; the annealing itself
  (``safeguard=None``) still does.
* **A row of weight 0** takes no part: it has no vote and no label.
* The candidates' labels are compared as the estimator's predictions
  (``argmax`` over the classes), so one-vs-rest and Potts models are
  treated alike.
"""

import numpy as np

__all__ = ["candidate_fractions", "candidates_agree", "as_positive_fraction"]

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


def as_positive_fraction(fractions):
    """Class fractions as an estimator's ``positive_fraction``: the positive class's for two classes, else all.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm._safeguard import as_positive_fraction
    >>> as_positive_fraction(np.array([0.6, 0.4]))
    0.4
    """
    return float(fractions[1]) if fractions.shape[0] == 2 else fractions


def candidates_agree(candidate_predictions):
    """Rows on which every candidate predicts the same class.

    Parameters
    ----------
    candidate_predictions : list of ndarrays of shape (n_unlabeled,)
        Predicted class indices of each candidate.

    Returns
    -------
    agree : ndarray of bool of shape (n_unlabeled,)

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm._safeguard import candidates_agree
    >>> candidates_agree([np.array([0, 1, 1]), np.array([0, 1, 0]), np.array([0, 1, 1])]).tolist()
    [True, True, False]
    """
    first = candidate_predictions[0]
    agree = np.ones(first.shape[0], dtype=bool)
    for other in candidate_predictions[1:]:
        agree &= other == first
    return agree

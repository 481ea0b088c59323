"""The safeguard of the semi-supervised SVMs: follow the unlabeled rows only where their answer is stable.

After Li & Zhou, "Towards Making Unlabeled Data Never Hurt" (S4VM, TPAMI 2015)
(``safeguard="agreement"``): candidates at the estimated class fractions, at
those moved by one standard error each way, and by a second optimizer
(``_second_opinion``); the l2-SVM is refitted on the labeled rows and the
unlabeled rows on which all candidates agree.

Design decisions: user guide, Implementation decisions: linear S3VMs, "The agreement safeguard".
"""

import numpy as np

__all__ = ["candidate_fractions", "candidates_agree", "as_positive_fraction"]

#: Class fractions of the candidates are kept within [FRACTION_FLOOR, 1 - FRACTION_FLOOR].
FRACTION_FLOOR = 1e-3


def candidate_fractions(fractions, n_labeled):
    """``f`` moved by one standard error ``sqrt(f (1 - f) / n_labeled)`` each way, kept positive and summing to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.safeguard._safeguard import candidate_fractions
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
    >>> from skssl.svm.safeguard._safeguard import as_positive_fraction
    >>> as_positive_fraction(np.array([0.6, 0.4]))
    0.4
    """
    return float(fractions[1]) if fractions.shape[0] == 2 else fractions


def candidates_agree(candidate_predictions):
    """Rows on which every candidate's predicted class indices agree.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.safeguard._safeguard import candidates_agree
    >>> candidates_agree([np.array([0, 1, 1]), np.array([0, 1, 0]), np.array([0, 1, 1])]).tolist()
    [True, True, False]
    """
    first = candidate_predictions[0]
    agree = np.ones(first.shape[0], dtype=bool)
    for other in candidate_predictions[1:]:
        agree &= other == first
    return agree

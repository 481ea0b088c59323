"""The safeguard's candidates rebuilt from public pieces, for the tests that check the safe model."""

from skssl.svm import TransductiveSVC


def second_opinion(est, fractions):
    """The safeguard's fourth candidate of ``est``, unfitted (only TSVM's schedule switch is private).

    The annealing estimators ask ``TransductiveSVC`` at the estimated
    ``fractions``; ``TransductiveSVC`` asks itself without its annealing of
    ``lam_u``.
    """
    tsvm = TransductiveSVC(
        alpha=est.alpha_,
        intercept_scaling=est.intercept_scaling_,
        unlabeled_weight=est.unlabeled_weight,
        positive_fraction=fractions,
        safeguard=None,
    )
    tsvm._anneals_unlabeled_weight = not isinstance(est, TransductiveSVC)
    return tsvm

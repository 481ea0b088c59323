"""The one check of row weights that scikit-learn's ``_check_sample_weight`` leaves out: their sums.

Finite weights can still sum beyond float64's range or to a subnormal
number; skssl's estimators divide by such sums, which gave NaN deep inside a
fit and errors that named other things.
"""

import numpy as np

__all__ = ["check_weight_total"]


def check_weight_total(weights, name="sample_weight", advice=""):
    """Raise a ``ValueError`` unless the sum of the non-negative ``weights`` is 0 or a normal float64.

    Parameters
    ----------
    weights : ndarray of shape (n_samples,)
        Finite, non-negative weights.
    name : str
        What to call them in the message.
    advice : str
        A sentence added to the message.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.utils._weights import check_weight_total
    >>> check_weight_total(np.array([1.0, 2.0]))
    >>> check_weight_total(np.array([1e308, 1e308]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: sample_weight sums to more than float64 holds (largest weight 1e+308). Divide the weights ...
    """
    with np.errstate(over="ignore"):
        total = float(np.sum(weights, dtype=np.float64))
    if not np.isfinite(total):
        raise ValueError(
            f"{name} sums to more than float64 holds (largest weight {float(np.max(weights)):.3g}). Divide the "
            f"weights by a common factor.{advice}"
        )
    if 0.0 < total < np.finfo(np.float64).tiny:
        raise ValueError(
            f"{name} sums to {total:.3g}, below float64's normal range; sums and ratios of such weights lose "
            f"their precision. Multiply the weights by a common factor.{advice}"
        )

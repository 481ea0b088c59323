"""The data-aware defaults of the regularization: ``alpha="auto"`` and ``intercept_scaling="auto"``.

``alpha_ = mean_i |x_i|^2 * (1 + unlabeled_weight) / (n_labeled + unlabeled_weight * n_unlabeled)``
over the fit's rows, counted by ``sample_weight``. ``intercept_scaling="auto"``
frees the bias on centred rows (``s = 10 sqrt(mean |x|^2)``), else SVMlin's ``s = 1``.
Derivation: user guide, "Mathematical formulation of the linear S3VMs".

Design decisions: user guide, Implementation decisions: linear S3VMs, "Regularization defaults".
"""

import numpy as np
import scipy.sparse as sp

from ..kernels._validation import on_used_columns

__all__ = [
    "AUTO_INTERCEPT_FACTOR",
    "CENTRED_TOLERANCE",
    "auto_alpha",
    "auto_alpha_from_sums",
    "auto_intercept_scaling",
    "fit_rows_are_centred",
    "resolve_regularization",
    "rows_are_centred",
    "weighted_column_sum",
]

#: ``intercept_scaling="auto"`` with ``alpha="auto"`` on centred rows: this many times their root mean squared norm.
AUTO_INTERCEPT_FACTOR = 10.0
#: Rows are centred when ``|mean_i x_i|^2 <= (CENTRED_TOLERANCE + 1 / n) mean_i |x_i|^2`` (``1 / n``: sampling noise).
CENTRED_TOLERANCE = 0.01


def _squared_row_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def auto_alpha(X, labeled, sample_weight=None, *, unlabeled_weight=1.0):
    """``alpha="auto"``: ``mean_i |x_i|^2 (1 + w_u) / (n_labeled + w_u n_unlabeled)``, rows weighted.

    ``unlabeled_weight=0`` (:class:`~skssl.svm.LinearL2SVC`) leaves the unlabeled rows out of the mean too.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.defaults._regularization import auto_alpha
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.0, -1.0]])
    >>> auto_alpha(X, np.array([True, True, False, False]))
    0.5
    >>> auto_alpha(X, np.array([True, True, False, False]), unlabeled_weight=0.0)
    0.5
    >>> auto_alpha(X, np.array([True, False, False, False]), unlabeled_weight=0.0)
    1.0
    """
    weights = _row_weights(X, labeled, sample_weight, unlabeled_weight)
    return auto_alpha_from_sums(*_row_sums(X, weights, labeled), unlabeled_weight)


def _row_weights(X, labeled, sample_weight, unlabeled_weight):
    weights = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return np.where(labeled, weights, 0.0) if unlabeled_weight == 0 else weights


def _row_sums(X, weights, labeled):
    """``(sum s_i |x_i|^2, sum s_i, n_labeled, n_unlabeled)`` over the rows of :func:`auto_alpha`'s mean."""
    n_labeled = float(weights[labeled].sum())
    n_unlabeled = float(weights[~labeled].sum())
    return float(np.dot(weights, _squared_row_norms(X))), float(weights.sum()), n_labeled, n_unlabeled


def weighted_column_sum(X, weights):
    """``sum_i weights_i x_i`` as a dense vector (``X.T @ weights``: O(nnz) for CSR)."""
    return np.asarray(X.T @ weights, dtype=np.float64).ravel()


def _used_column_sum(X, weights):
    """:func:`weighted_column_sum` over the used columns only (a wide sparse ``X`` stays cheap)."""
    return weighted_column_sum(on_used_columns(X)[0], weights)


def _mean_squared_norm(norm_sum, weight_sum):
    mean_norm = norm_sum / weight_sum
    return mean_norm if mean_norm > 0 else 1.0  # only all-zero rows: the bias's constant feature sets the scale


def auto_alpha_from_sums(norm_sum, weight_sum, n_labeled, n_unlabeled, unlabeled_weight):
    """:func:`auto_alpha` from ``sum_i s_i |x_i|^2``, ``sum_i s_i`` and the two weight sums (a Dask fit's sums)."""
    mean_norm = _mean_squared_norm(norm_sum, weight_sum)
    if not n_unlabeled > 0:
        return mean_norm / n_labeled
    return mean_norm * (1.0 + unlabeled_weight) / (n_labeled + unlabeled_weight * n_unlabeled)


def auto_intercept_scaling(norm_sum, weight_sum, column_sum):
    """``intercept_scaling="auto"``: ``AUTO_INTERCEPT_FACTOR sqrt(mean_i |x_i|^2)`` on centred rows, else 1.

    ``column_sum`` is ``sum_i s_i x_i`` over the rows of :func:`auto_alpha_from_sums`.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.defaults._regularization import auto_intercept_scaling
    >>> auto_intercept_scaling(40000.0, 400.0, np.zeros(3))  # 400 centred rows of squared norm 100
    100.0
    >>> auto_intercept_scaling(40000.0, 400.0, np.array([2000.0, 0.0, 0.0]))  # their mean 5 from the origin
    1.0
    """
    if not rows_are_centred(norm_sum, weight_sum, column_sum):
        return 1.0
    return AUTO_INTERCEPT_FACTOR * float(np.sqrt(_mean_squared_norm(norm_sum, weight_sum)))


def rows_are_centred(norm_sum, weight_sum, column_sum):
    """Whether ``|mean_i x_i|^2 <= (CENTRED_TOLERANCE + 1 / weight_sum) mean_i |x_i|^2`` (no weight: False).

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.defaults._regularization import rows_are_centred
    >>> rows_are_centred(40000.0, 400.0, np.zeros(3)), rows_are_centred(40000.0, 400.0, np.array([2000.0, 0, 0]))
    (True, False)
    """
    if not weight_sum > 0:
        return False
    mean_norm = _mean_squared_norm(norm_sum, weight_sum)
    mean_row = np.asarray(column_sum, dtype=np.float64) / weight_sum
    return bool(float(np.dot(mean_row, mean_row)) <= (CENTRED_TOLERANCE + 1.0 / weight_sum) * mean_norm)


def fit_rows_are_centred(X, sample_weight=None):
    """:func:`rows_are_centred` over all rows of ``X`` (weighted by ``sample_weight``; O(nnz) for CSR)."""
    weights = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    norm_sum = float(np.dot(weights, _squared_row_norms(X)))
    return rows_are_centred(norm_sum, float(weights.sum()), _used_column_sum(X, weights))


def resolve_regularization(alpha, intercept_scaling, X, labeled, sample_weight=None, *, unlabeled_weight=1.0):
    """``(alpha_, intercept_scaling_)``; with a given ``alpha``, ``intercept_scaling="auto"`` is SVMlin's 1."""
    if not isinstance(alpha, str):  # "auto" is the only string the parameter constraints let through
        return float(alpha), (1.0 if isinstance(intercept_scaling, str) else float(intercept_scaling))
    weights = _row_weights(X, labeled, sample_weight, unlabeled_weight)
    norm_sum, weight_sum, n_labeled, n_unlabeled = _row_sums(X, weights, labeled)
    alpha_ = auto_alpha_from_sums(norm_sum, weight_sum, n_labeled, n_unlabeled, unlabeled_weight)
    if not isinstance(intercept_scaling, str):
        return alpha_, float(intercept_scaling)
    return alpha_, auto_intercept_scaling(norm_sum, weight_sum, _used_column_sum(X, weights))

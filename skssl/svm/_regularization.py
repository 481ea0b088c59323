"""The data-aware defaults of the regularization: ``alpha="auto"`` and ``intercept_scaling="auto"``.

``alpha="auto"`` sets the regularization from the data's scale and the
number of rows that inform the fit::

    alpha_ = mean_i |x_i|^2 * (1 + unlabeled_weight) / (n_labeled + unlabeled_weight * n_unlabeled)

with the mean over every row of the fit, labeled or not. The supervised
:class:`~skssl.svm.LinearL2SVC` uses no unlabeled row (take
``unlabeled_weight = 0``): its mean runs over the labeled rows only, which
it must not depend on, and ``alpha_ = mean |x_i|^2 / n_labeled``.

Why this form. The objective averages the losses (labeled costs summing
to 1, unlabeled ones to ``unlabeled_weight``), so its data term has
curvature of the order of ``mean |x_i|^2`` along the directions the rows
span, while ``alpha`` weighs the penalty: their ratio, not ``alpha``
alone, sets how much the weights are shrunk, so a fixed ``alpha`` that
suits tf-idf rows (norm 1) under-regularizes standardized tabular rows
(squared norm = number of features) by that factor. The second factor is
the total cost over the number of rows that carry it, each unlabeled row
counted at ``unlabeled_weight``: the penalty of a loss summed over rows
with a fixed cost per row, as scikit-learn's ``C`` is for labeled rows
(``LinearSVC(C=C)`` on ``l`` labeled rows is this objective at
``alpha = 1 / (2 C l)``, so the supervised rule on rows of unit norm is
``C = 0.5``). More rows, labeled or not, pin the separator down
and need less shrinkage: with 10% of the rows labeled the
semi-supervised estimators get ``0.2 mean |x_i|^2 / n_labeled``, with 100
labels among 7,000 documents about a seventh of that. It is the kind of
rule scikit-learn's ``SVC(gamma="scale")`` uses for its kernel width: no
search, no folds, the same value for the same data.

Measured (``benchmarks/user_value.py``'s development sets, 3 label draws,
gain in accuracy points over the better of ``LogisticRegression()`` and
``LinearSVC()`` on the labeled rows). The previous rule,
``0.2 mean |x_i|^2 / n_labeled`` for every estimator, gave the same
``alpha_`` to the semi-supervised estimators on the tabular sets (10% of
the rows labeled) but too much regularization on text, where unlabeled
rows outnumber labeled ones 13 to 110 times: :class:`TransductiveSVC`
on movie reviews at factors 0.02 / 0.05 / 0.2 gained +0.5 / +0.5 / -1.4
points, on pcmac +3.5 / +3.7 / +2.8. The supervised
:class:`LinearL2SVC` at ``mean |x_i|^2 / n_labeled`` instead of 0.2 times
that gains -0.58 instead of -0.90 points on average over the 19
development sets, worst -3.0 (iris) instead of -5.9, with 5 losses of more
than a point either way: better on small tabular sets (horse colic +0.4
against -3.7, haberman -0.4 against -2.5), worse on 20 Newsgroups binary
(-1.3 against +0.5), movie reviews (-0.7 against +1.2) and digits (-1.2
against +0.2), where the lighter penalty suited the supervised fit. A
cross-validated search over 11 values of ``alpha`` on the labeled rows
was no better for the supervised model and worse for TSVM (-1.00 points
on average): with 10 to 400 labels the folds are too small to rank the
values. Other levers measured and rejected there: a smaller
``unlabeled_weight`` (0.25 or 0.5) lost up to 5.9 points on the tabular
sets, and choosing among class fractions within a standard error the one
whose separator has the lowest objective lost 0.5 points on average
against the estimated fraction.

``intercept_scaling="auto"`` goes with ``alpha="auto"``. The bias is the
weight of a constant feature of value ``s``, so its penalty is
``alpha / s^2``; SVMlin appends the constant 1 and regularizes the bias like
a weight, which pulls the score at the origin towards 0. On centred rows
(``|mean_i x_i|^2 <= (0.01 + 1/n) mean_i |x_i|^2`` over the ``n`` rows of
the same mean: standardized features), ``s = 10 sqrt(mean_i |x_i|^2)``: the
penalty is a hundredth of what the weight of a feature of the rows' scale
pays and the bias is practically free, as in ``LogisticRegression``. On
other rows ``s = 1``.

Why the centring test. The origin of standardized rows is the centre of
the data, and a penalty on the score there is an arbitrary prior that
costs where the bias must be far from 0: unbalanced classes, every
one-vs-rest problem of a multi-class fit. The origin of tf-idf rows, counts
or pixels means "no evidence", and there the penalty is a useful prior.
Measured with ``benchmarks/user_value.py`` (3 label draws, gain over the
better of ``LogisticRegression()`` and ``LinearSVC()`` on the labeled rows),
``s = 10 sqrt(mean |x|^2)`` on every kind of row against ``s = 1``: on the 20
tabular sets (development and held-out) :class:`TransductiveSVC` -0.04 ->
+0.27 points on average, worst -7.4 -> -3.7 (iris), losses of more than 3
points 2 -> 1; :class:`DeterministicAnnealingSVC` +0.35 -> +0.47 on the 11
binary ones; Potts DA better or equal on 8 of the 9 multi-class ones. On
the text sets it cost: TSVM -0.5 points on the five unseen newsgroup pairs
(+4.8 -> +4.3) and -0.7 on movie reviews, DA -1.2 on the unseen pairs (+3.4
-> +2.2; religion +2.8 -> -2.7); a constant of 3 instead of 10 cost the same.
The rows' mean separates the two kinds with room: ``|mean x|^2 / mean |x|^2``
is 0 on every standardized set and 0.02 (SMS) to 0.24 (movie reviews) on
tf-idf, 0.69 on the digits' pixels. A constant of 10 and of 30 gave the same
tabular means; 3 gave half the gain. Why not with a given ``alpha``:
SVMlin's objective is what its reference runs and ``alpha`` given as
SVMlin's ``-W`` mean, so a number keeps ``s = 1`` unless
``intercept_scaling`` is given too.

Decisions
---------
* **Sample weights count rows**: with ``sample_weight`` the mean is weighted
  and ``n_labeled``, ``n_unlabeled`` are the sums of the labeled and the
  unlabeled rows' weights, so a weight of 2 is the row counted twice here
  too. ``class_weight`` does not enter (it reweighs the classes, it does
  not add rows).
* **No unlabeled row** (``n_unlabeled = 0``): ``alpha_ = mean |x_i|^2 /
  n_labeled``, the supervised value, whatever ``unlabeled_weight`` is.
* **Rows of zero norm only** (an all-zero ``X``): the mean is taken as 1,
  the squared norm of the bias's constant feature, so ``alpha_`` stays
  positive.
* The value used is stored in ``alpha_`` for both ``"auto"`` and a given
  number, and a given number is used as it is (SVMlin's reference runs
  give ``alpha`` explicitly).
"""

import numpy as np
import scipy.sparse as sp

from ._validation import on_used_columns

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
#: Rows are centred when ``|mean_i x_i|^2 <= (CENTRED_TOLERANCE + 1 / n) mean_i |x_i|^2`` over ``n`` rows: the mean
#: within a tenth of the rows' root mean squared norm of the origin, once the ``1 / n`` that the mean of ``n`` rows
#: drawn around the origin has on average is allowed for.
CENTRED_TOLERANCE = 0.01


def _squared_row_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def auto_alpha(X, labeled, sample_weight=None, *, unlabeled_weight=1.0):
    """``alpha="auto"``: ``mean_i |x_i|^2 (1 + w_u) / (n_labeled + w_u n_unlabeled)``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The rows of the fit (float64; CSR when sparse).
    labeled : ndarray of bool of shape (n_samples,)
        Labeled rows.
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights (counts): the mean is weighted and the rows count by
        their weights.
    unlabeled_weight : float, default=1.0
        ``w_u``, the weight of the unlabeled rows' mean loss against the
        labeled rows' (the estimator's ``unlabeled_weight``). ``0`` is the
        supervised :class:`~skssl.svm.LinearL2SVC`: the unlabeled rows
        take no part, in the mean either.

    Returns
    -------
    alpha : float
        A positive regularization.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm._regularization import auto_alpha
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
    """:func:`weighted_column_sum` over the columns that hold an entry of ``X`` only (the others' sums are 0).

    What the centring test reads, the squared norm of the mean row, is the same without the zeros, and a wide
    sparse ``X`` is not summed into a dense vector of all its columns.
    """
    return weighted_column_sum(on_used_columns(X)[0], weights)


def _mean_squared_norm(norm_sum, weight_sum):
    mean_norm = norm_sum / weight_sum
    return mean_norm if mean_norm > 0 else 1.0  # only all-zero rows: the bias's constant feature sets the scale


def auto_alpha_from_sums(norm_sum, weight_sum, n_labeled, n_unlabeled, unlabeled_weight):
    """:func:`auto_alpha` from the sums over the rows (what a Dask fit sums over its row blocks).

    Parameters
    ----------
    norm_sum : float
        ``sum_i s_i |x_i|^2`` over the rows of the mean (without the unlabeled ones when ``unlabeled_weight`` is 0).
    weight_sum : float
        ``sum_i s_i`` over the same rows.
    n_labeled, n_unlabeled : float
        The labeled and unlabeled rows' weight sums.
    unlabeled_weight : float
        ``w_u``.

    Returns
    -------
    alpha : float
    """
    mean_norm = _mean_squared_norm(norm_sum, weight_sum)
    if not n_unlabeled > 0:
        return mean_norm / n_labeled
    return mean_norm * (1.0 + unlabeled_weight) / (n_labeled + unlabeled_weight * n_unlabeled)


def auto_intercept_scaling(norm_sum, weight_sum, column_sum):
    """``intercept_scaling="auto"`` with ``alpha="auto"``: free the bias of centred rows, else SVMlin's 1.

    Parameters
    ----------
    norm_sum, weight_sum : float
        As for :func:`auto_alpha_from_sums`: the mean runs over the same rows.
    column_sum : ndarray of shape (n_features,)
        ``sum_i s_i x_i`` over those rows.

    Returns
    -------
    intercept_scaling : float
        ``AUTO_INTERCEPT_FACTOR sqrt(mean_i |x_i|^2)`` when the rows' mean is within a tenth of their root mean
        squared norm of the origin (``CENTRED_TOLERANCE``, plus ``1 / weight_sum`` for the sampling noise of the
        mean), else 1.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm._regularization import auto_intercept_scaling
    >>> auto_intercept_scaling(40000.0, 400.0, np.zeros(3))  # 400 centred rows of squared norm 100
    100.0
    >>> auto_intercept_scaling(40000.0, 400.0, np.array([2000.0, 0.0, 0.0]))  # their mean 5 from the origin
    1.0
    """
    if not rows_are_centred(norm_sum, weight_sum, column_sum):
        return 1.0
    return AUTO_INTERCEPT_FACTOR * float(np.sqrt(_mean_squared_norm(norm_sum, weight_sum)))


def rows_are_centred(norm_sum, weight_sum, column_sum):
    """Whether the rows' mean lies within a tenth of their root mean squared norm of the origin (standardized rows).

    ``|mean_i x_i|^2 <= (CENTRED_TOLERANCE + 1 / weight_sum) mean_i |x_i|^2``, the means weighted; the arguments
    are those of :func:`auto_intercept_scaling`. No row of positive weight: not centred.

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm._regularization import rows_are_centred
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
    """The ``alpha_`` and ``intercept_scaling_`` a fit uses.

    ``alpha="auto"`` is :func:`auto_alpha`; with it, ``intercept_scaling="auto"`` is
    :func:`auto_intercept_scaling` over the same rows. With a given ``alpha``, ``intercept_scaling="auto"``
    is 1: SVMlin's objective, the bias regularized like a weight. Numbers are used as they are.

    Returns
    -------
    alpha_, intercept_scaling_ : float
    """
    if not isinstance(alpha, str):  # "auto" is the only string the parameter constraints let through
        return float(alpha), (1.0 if isinstance(intercept_scaling, str) else float(intercept_scaling))
    weights = _row_weights(X, labeled, sample_weight, unlabeled_weight)
    norm_sum, weight_sum, n_labeled, n_unlabeled = _row_sums(X, weights, labeled)
    alpha_ = auto_alpha_from_sums(norm_sum, weight_sum, n_labeled, n_unlabeled, unlabeled_weight)
    if not isinstance(intercept_scaling, str):
        return alpha_, float(intercept_scaling)
    return alpha_, auto_intercept_scaling(norm_sum, weight_sum, _used_column_sum(X, weights))

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

``intercept_scaling="auto"`` goes with ``alpha="auto"``: the bias is the
weight of a constant feature of value ``s = 10 sqrt(mean_i |x_i|^2)`` (the
same mean), so its penalty ``alpha / s^2`` is a hundredth of what the weight
of a feature of the rows' scale pays: the bias is practically free, as in
``LogisticRegression``. SVMlin appends the constant 1 and regularizes the
bias like a weight, which pulls it towards 0 where the data need it far
from 0: unbalanced classes, every one-vs-rest problem of a multi-class fit,
standardized rows with an unbalanced label. Measured on the 20 tabular sets
of ``benchmarks/user_value.py`` (development and held-out, 3 label draws,
gain over the better of ``LogisticRegression()`` and ``LinearSVC()`` on the
labeled rows), against ``s = 1``: :class:`TransductiveSVC` -0.04 -> +0.27
points on average, worst -7.4 -> -3.7 (iris), losses of more than 3 points
2 -> 1; :class:`DeterministicAnnealingSVC` +0.35 -> +0.47 on the 11 binary
sets; :class:`LinearL2SVC` -0.56 -> -0.02 (but iris -3.0 -> -5.2). A
constant of 10 and of 30 (on standardized rows, 1 to 6 times the rows' root
mean squared norm) gave the same means; 3 gave half the gain. On tf-idf
rows (norm 1, topics near balance) test accuracies moved by less than a
point. Why not with a given ``alpha``: SVMlin's objective is what its
reference runs and ``alpha`` given as SVMlin's ``-W`` mean, so a number
keeps ``s = 1`` unless ``intercept_scaling`` is given too.

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

__all__ = [
    "AUTO_INTERCEPT_FACTOR",
    "auto_alpha",
    "auto_alpha_from_sums",
    "auto_intercept_scaling",
    "resolve_alpha",
    "resolve_regularization",
]

#: ``intercept_scaling="auto"`` with ``alpha="auto"``: this many times the rows' root mean squared norm.
AUTO_INTERCEPT_FACTOR = 10.0


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
    return auto_alpha_from_sums(*_row_sums(X, labeled, sample_weight, unlabeled_weight), unlabeled_weight)


def _row_sums(X, labeled, sample_weight, unlabeled_weight):
    """``(sum s_i |x_i|^2, sum s_i, n_labeled, n_unlabeled)`` over the rows of :func:`auto_alpha`'s mean."""
    norms = _squared_row_norms(X)
    weights = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if unlabeled_weight == 0:
        weights = np.where(labeled, weights, 0.0)
    n_labeled = float(weights[labeled].sum())
    n_unlabeled = float(weights[~labeled].sum())
    return float(np.dot(weights, norms)), float(weights.sum()), n_labeled, n_unlabeled


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


def resolve_alpha(alpha, X, labeled, sample_weight=None, *, unlabeled_weight=1.0):
    """The ``alpha`` a fit uses: :func:`auto_alpha` for ``"auto"``, else ``alpha`` itself as a float."""
    if isinstance(alpha, str):  # "auto", the only string the parameter constraints let through
        return auto_alpha(X, labeled, sample_weight, unlabeled_weight=unlabeled_weight)
    return float(alpha)


def auto_intercept_scaling(norm_sum, weight_sum):
    """``intercept_scaling="auto"`` with ``alpha="auto"``: ``AUTO_INTERCEPT_FACTOR sqrt(mean_i |x_i|^2)``.

    Parameters
    ----------
    norm_sum, weight_sum : float
        As for :func:`auto_alpha_from_sums`: the mean runs over the same rows.

    Returns
    -------
    intercept_scaling : float

    Examples
    --------
    >>> from skssl.svm._regularization import auto_intercept_scaling
    >>> auto_intercept_scaling(400.0, 4.0)
    100.0
    """
    return AUTO_INTERCEPT_FACTOR * float(np.sqrt(_mean_squared_norm(norm_sum, weight_sum)))


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
    norm_sum, weight_sum, n_labeled, n_unlabeled = _row_sums(X, labeled, sample_weight, unlabeled_weight)
    alpha_ = auto_alpha_from_sums(norm_sum, weight_sum, n_labeled, n_unlabeled, unlabeled_weight)
    if isinstance(intercept_scaling, str):
        return alpha_, auto_intercept_scaling(norm_sum, weight_sum)
    return alpha_, float(intercept_scaling)

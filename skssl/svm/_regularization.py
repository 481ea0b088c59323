"""The data-aware default of ``alpha``: ``alpha="auto"`` of the linear estimators.

``alpha="auto"`` sets the regularization from the data's scale and the
number of labeled rows::

    alpha_ = AUTO_ALPHA_FACTOR * mean_i |x_i|^2 / n_labeled

with the mean over every row of the fit, labeled or not (over the labeled
rows only for the supervised :class:`~skssl.svm.LinearL2SVC`, which must
not depend on the rows it ignores), and ``AUTO_ALPHA_FACTOR = 0.2``.

Why this form. The objective averages the labeled loss, so its data term
has curvature of the order of ``mean |x_i|^2`` along the directions the rows
span, while ``alpha`` weighs the penalty: their ratio, not ``alpha``
alone, sets how much the weights are shrunk, so a fixed ``alpha`` that
suits tf-idf rows (norm 1) under-regularizes standardized tabular rows
(squared norm = number of features) by that factor. Dividing by the
number of labeled rows keeps the penalty of a summed loss constant, as
scikit-learn's ``C`` does: ``LinearSVC(C=1)`` on ``l`` labeled rows is this
objective at ``alpha = 1 / (2 l)`` for rows of unit norm, and the factor
0.2 is slightly less regularization than that, which the semi-supervised
fits need to follow a low-density gap. It is the kind of rule
scikit-learn's ``SVC(gamma="scale")`` uses for its kernel width: no search,
no folds, the same value for the same data.

Measured choice of the factor (``benchmarks/user_value.py``'s development
sets only, 3 label draws): the supervised :class:`LinearL2SVC` at factors
0.1 / 0.2 / 0.5 loses more than 1 point to the better of
``LogisticRegression()`` and ``LinearSVC()`` on 7 / 6 / 4 of 19 sets
(``alpha=1e-3``: 11), and :class:`TransductiveSVC` gains -0.13 / +0.07 /
-0.09 points on average (``alpha=1e-3``: -1.23). A cross-validated search
over 11 values of ``alpha`` on the labeled rows was no better for the
supervised model (8 losses) and worse for TSVM (-1.00): with 10 to 400
labels the folds are too small to rank the values.

Decisions
---------
* **Sample weights count rows**: with ``sample_weight`` the mean is weighted
  and ``n_labeled`` is the sum of the labeled rows' weights, so a weight of
  2 is the row counted twice here too. ``class_weight`` does not enter (it
  reweighs the classes, it does not add rows).
* **Rows of zero norm only** (an all-zero ``X``): the mean is taken as 1,
  the squared norm of the bias's constant feature, so ``alpha_`` stays
  positive.
* The value used is stored in ``alpha_`` for both ``"auto"`` and a given
  number, and a given number is used as it is (SVMlin's reference runs
  give ``alpha`` explicitly).
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["AUTO_ALPHA_FACTOR", "auto_alpha", "resolve_alpha"]

#: ``alpha="auto"`` is this factor times the mean squared row norm over the
#: number of labeled rows.
AUTO_ALPHA_FACTOR = 0.2


def _squared_row_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def auto_alpha(X, labeled, sample_weight=None, *, unlabeled_rows=True):
    """``alpha="auto"``: ``AUTO_ALPHA_FACTOR * mean_i |x_i|^2 / n_labeled``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The rows of the fit (float64; CSR when sparse).
    labeled : ndarray of bool of shape (n_samples,)
        Labeled rows.
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights (counts): the mean is weighted and the labeled rows
        count by their weights.
    unlabeled_rows : bool, default=True
        Whether the mean runs over the unlabeled rows too (the
        semi-supervised estimators) or over the labeled rows only (the
        supervised :class:`~skssl.svm.LinearL2SVC`, which must not depend
        on rows it ignores).

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
    0.1
    """
    norms = _squared_row_norms(X)
    if not unlabeled_rows:
        weights = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        sample_weight = np.where(labeled, weights, 0.0)
    if sample_weight is None:
        mean_norm, n_labeled = float(norms.mean()), float(np.count_nonzero(labeled))
    else:
        mean_norm = float(np.dot(sample_weight, norms) / sample_weight.sum())
        n_labeled = float(sample_weight[labeled].sum())
    if not mean_norm > 0:
        mean_norm = 1.0  # only all-zero rows: the bias's constant feature sets the scale
    return AUTO_ALPHA_FACTOR * mean_norm / n_labeled


def resolve_alpha(alpha, X, labeled, sample_weight=None, *, unlabeled_rows=True):
    """The ``alpha`` a fit uses: :func:`auto_alpha` for ``"auto"``, else ``alpha`` itself as a float."""
    if isinstance(alpha, str):  # "auto", the only string the parameter constraints let through
        return auto_alpha(X, labeled, sample_weight, unlabeled_rows=unlabeled_rows)
    return float(alpha)

"""SVMlin's semi-supervised objective (its ``transductive_cost``).

    F(w, b) = 1/2 * ( alpha * (|w|^2 + b^2)
                      + (1/l) sum_labeled max(0, 1 - y_i o_i)^2
                      + (lam_u/u) sum_unlabeled max(0, 1 - |o_j|)^2 ),   o = X w + b.

It is the quantity TSVM and DA minimize and the one the reference runs of
SVMlin report; both estimators store it per binary problem in ``objective_``.
The bias is regularized like a weight, as in SVMlin.
"""

import numpy as np

from ._kernels import dot

__all__ = ["transductive_cost"]


def transductive_cost(w, b, outputs, y, labeled, alpha, unlabeled_weight, sample_weight=None):
    """SVMlin's ``transductive_cost`` of a binary linear model.

    Parameters
    ----------
    w : ndarray of shape (n_features,)
        Weights.
    b : float
        Bias.
    outputs : ndarray of shape (n_rows,)
        ``X @ w + b`` on the training rows.
    y : ndarray of shape (n_rows,)
        +1 / -1 on labeled rows; other entries are ignored.
    labeled : ndarray of bool of shape (n_rows,)
        Labeled rows.
    alpha : float
        Regularization ``lam``.
    unlabeled_weight : float
        ``lam_u``.
    sample_weight : ndarray of shape (n_rows,), default=None
        Row weights: the two means become weighted means (a weight of 2 is
        the row counted twice). ``None`` means unit weights.

    Returns
    -------
    F : float

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm._objective import transductive_cost
    >>> transductive_cost(np.zeros(2), 0.0, np.zeros(3), np.array([1.0, -1.0, 0.0]),
    ...                   np.array([True, True, False]), 1e-3, 1.0)
    1.0
    """
    o_lab = outputs[labeled]
    o_unl = outputs[~labeled]
    s_lab = np.maximum(0.0, 1.0 - y[labeled] * o_lab)
    if sample_weight is None:
        F = alpha * (dot(w, w) + b * b) + dot(s_lab, s_lab) / o_lab.size
        if o_unl.size:
            s_unl = np.maximum(0.0, 1.0 - np.abs(o_unl))
            F += unlabeled_weight * dot(s_unl, s_unl) / o_unl.size
        return float(0.5 * F)
    sw_lab, sw_unl = sample_weight[labeled], sample_weight[~labeled]
    F = alpha * (dot(w, w) + b * b) + dot(sw_lab, s_lab * s_lab) / sw_lab.sum()
    if o_unl.size and sw_unl.sum() > 0:
        s_unl = np.maximum(0.0, 1.0 - np.abs(o_unl))
        F += unlabeled_weight * dot(sw_unl, s_unl * s_unl) / sw_unl.sum()
    return float(0.5 * F)

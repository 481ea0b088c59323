"""The multi-class l2-SVM of the safeguard's refit: Weston & Watkins' loss, squared, solved by Newton's method.

On centred rows the safeguard (:mod:`skssl.svm.safeguard._safeguard`) ends a
multi-class fit with one supervised solve over all classes jointly::

    J(W, b) = alpha / 2 * sum_k |w_k|^2 + alpha_b / 2 * sum_k b_k^2
              + 1 / 2 * sum_i c_i * sum_{k != y_i} max(0, 1 - (s_{i, y_i} - s_{i, k}))^2,
    s_{i, k} = x_i . w_k + b_k,

with ``alpha = 2 alpha_refit`` and ``alpha_b = 2 alpha_refit / intercept_scaling^2``
(J. Weston & C. Watkins, "Support Vector Machines for Multi-Class Pattern
Recognition", ESANN 1999, with the squared hinge). It is minimized by the
finite Newton method of Keerthi & DeCoste (JMLR 2005) for all classes at
once: :func:`data_term`, :func:`data_curvature` and an exact line search.
The data term is a sum over rows, so a Dask fit sums it over its blocks.

Design decisions: user guide, Implementation decisions: linear S3VMs, "The joint multi-class refit".
"""

import inspect
from functools import partial

import numpy as np
import scipy.optimize
import scipy.sparse.linalg

__all__ = ["GRADIENT_TOLERANCE", "MAX_ITER", "JointLoss", "data_curvature", "data_term", "fit_weston_watkins"]

#: Stop when the gradient's norm is below this fraction of its norm at ``W = 0, b = 0``.
GRADIENT_TOLERANCE = 1e-10
#: Cap on Newton iterations.
MAX_ITER = 100
#: The smallest relative residual at which conjugate gradients stop solving for a Newton step (the residual asked
#: for is ``sqrt(|gradient| / |gradient at 0|)``, at most 0.1, no less than this), and their cap on iterations.
CG_TOLERANCE, CG_MAX_ITER = 1e-10, 1000
# scipy 1.12 renamed cg's relative tolerance from ``tol`` to ``rtol`` (and 1.14 removed ``tol``); skssl supports
# scipy from 1.9.2, so the keyword is looked up once.
_CG_RELATIVE_TOLERANCE = "rtol" if "rtol" in inspect.signature(scipy.sparse.linalg.cg).parameters else "tol"
#: A step length is exact when the slope there is below this fraction of the slope at the start.
SLOPE_TOLERANCE = 1e-12


def data_term(X, y, costs, coef, intercept):
    """The loss of rows ``X`` and its gradient in the scores' parameters.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_rows, n_features)
        The rows (CSR when sparse).
    y : ndarray of int of shape (n_rows,)
        Class index of each row, in ``0 .. n_classes - 1``.
    costs : ndarray of shape (n_rows,)
        Non-negative row costs ``c_i``.
    coef : ndarray of shape (n_classes, n_features)
    intercept : ndarray of shape (n_classes,)

    Returns
    -------
    loss : float
        ``1/2 sum_i c_i sum_{k != y_i} max(0, 1 - s_{i, y_i} + s_{i, k})^2``.
    grad_coef : ndarray of shape (n_classes, n_features)
    grad_intercept : ndarray of shape (n_classes,)

    Examples
    --------
    >>> import numpy as np
    >>> from skssl.svm.solvers._weston_watkins import data_term
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> loss, _, _ = data_term(X, np.array([0, 1]), np.ones(2), np.zeros((3, 2)), np.zeros(3))
    >>> float(loss)  # each row misses its margin of 1 against two other classes
    2.0
    """
    rows = np.arange(X.shape[0])
    scores = np.asarray(X @ coef.T) + intercept
    slack = 1.0 - scores[rows, y][:, None] + scores
    slack[rows, y] = 0.0
    np.maximum(slack, 0.0, out=slack)
    weighted = costs[:, None] * slack
    loss = 0.5 * float(np.sum(weighted * slack))
    # d loss / d s_{i,k} = c_i slack_{i,k} for k != y_i, and minus their sum for k = y_i.
    weighted[rows, y] = -weighted.sum(axis=1)
    grad_coef = np.asarray(X.T @ weighted).T
    return loss, grad_coef, weighted.sum(axis=0)


def data_curvature(X, y, costs, coef, intercept, direction_coef, direction_intercept):
    """The loss's generalized Hessian at ``(coef, intercept)`` times a direction (as l2-SVM-MFN uses it).

    ``sum c_i (e_k - e_{y_i})(e_k - e_{y_i})^T (x) x_i x_i^T`` over the pairs
    ``(i, k)`` that miss their margin; ``X, y, costs, coef, intercept`` as in
    :func:`data_term`. Returns the products for the weights and the biases.
    """
    return _curvature_product(X, y, _active_costs(X, y, costs, coef, intercept), direction_coef, direction_intercept)


def _active_costs(X, y, costs, coef, intercept):
    """``c_i`` on the pairs ``(i, k)`` missing their margin at ``(coef, intercept)``, else 0; (n_rows, n_classes)."""
    rows = np.arange(X.shape[0])
    scores = np.asarray(X @ coef.T) + intercept
    active = 1.0 - scores[rows, y][:, None] + scores > 0.0
    active[rows, y] = False
    return np.where(active, costs[:, None], 0.0)


def _curvature_product(X, y, active_costs, direction_coef, direction_intercept):
    rows = np.arange(X.shape[0])
    moved = np.asarray(X @ direction_coef.T) + direction_intercept
    weighted = active_costs * (moved - moved[rows, y][:, None])
    weighted[rows, y] = -weighted.sum(axis=1)
    return np.asarray(X.T @ weighted).T, weighted.sum(axis=0)


class JointLoss:
    """:func:`data_term` and :func:`data_curvature` of rows in memory, the margins in force kept between products.

    A Newton step multiplies the generalized Hessian at one point by many
    directions (its conjugate-gradient iterations); keeping the pairs that
    miss their margin at that point saves one product with ``X`` in each.

    Parameters
    ----------
    X, y, costs
        As in :func:`data_term`.
    """

    def __init__(self, X, y, costs):
        self.X, self.y, self.costs = X, y, costs
        self._point, self._active_costs = None, None

    def terms(self, coef, intercept):
        """:func:`data_term` at ``(coef, intercept)``."""
        return data_term(self.X, self.y, self.costs, coef, intercept)

    def curvature(self, coef, intercept, direction_coef, direction_intercept):
        """:func:`data_curvature` at ``(coef, intercept)`` along a direction.

        The margins in force are kept for the point given by the same two array
        objects as the last call (one pair per Newton step); the pair is held, and
        must not be changed in place between calls.
        """
        if self._point is None or self._point[0] is not coef or self._point[1] is not intercept:
            self._point = (coef, intercept)
            self._active_costs = _active_costs(self.X, self.y, self.costs, coef, intercept)
        return _curvature_product(self.X, self.y, self._active_costs, direction_coef, direction_intercept)


def fit_weston_watkins(data_terms, data_curvatures, start_coef, start_intercept, alpha, alpha_b):
    """Minimize the joint objective of the module's docstring.

    Parameters
    ----------
    data_terms : callable
        ``data_terms(coef, intercept)`` returns :func:`data_term`'s
        ``(loss, grad_coef, grad_intercept)`` summed over all rows.
    data_curvatures : callable
        ``data_curvatures(coef, intercept, direction_coef, direction_intercept)``
        returns :func:`data_curvature`'s products summed over all rows.
    start_coef : ndarray of shape (n_classes, n_features)
    start_intercept : ndarray of shape (n_classes,)
        Where the solver starts.
    alpha, alpha_b : float
        Penalties of the weights and of the biases (already doubled: with two
        classes the joint objective at ``2 alpha`` is the binary l2-SVM at ``alpha``).

    Returns
    -------
    coef : ndarray of shape (n_classes, n_features)
    intercept : ndarray of shape (n_classes,)
    converged : bool
        Whether the gradient test stopped the solver (not its iteration cap).
    """
    n_classes, n_features = start_coef.shape
    n_coef = n_classes * n_features

    def split(theta):
        return theta[:n_coef].reshape(n_classes, n_features), theta[n_coef:]

    def penalized(data_coef, data_intercept, coef, intercept):
        # data part + penalty's part, written into one new flat vector: no ravel or concatenate copies of the model
        out = np.empty(n_coef + n_classes)
        out_coef, out_intercept = split(out)
        np.multiply(coef, alpha, out=out_coef)
        out_coef += data_coef
        np.multiply(intercept, alpha_b, out=out_intercept)
        out_intercept += data_intercept
        return out

    def objective(theta):
        coef, intercept = split(theta)
        loss, grad_coef, grad_intercept = data_terms(coef, intercept)
        value = loss + 0.5 * alpha * float(np.sum(coef * coef)) + 0.5 * alpha_b * float(intercept @ intercept)
        return value, penalized(grad_coef, grad_intercept, coef, intercept)

    def curvature(point, direction):
        along_coef, along_intercept = split(direction)
        product_coef, product_intercept = data_curvatures(*point, along_coef, along_intercept)
        return penalized(product_coef, product_intercept, along_coef, along_intercept)

    scale = float(np.linalg.norm(objective(np.zeros(n_coef + n_classes))[1]))
    if scale == 0.0:  # every cost is 0: the penalty alone, minimized at 0
        return np.zeros((n_classes, n_features)), np.zeros(n_classes), True
    theta = np.concatenate([np.asarray(start_coef, dtype=np.float64).ravel(), start_intercept])
    _, grad = objective(theta)
    converged = False
    for _ in range(MAX_ITER):
        if np.linalg.norm(grad) <= GRADIENT_TOLERANCE * scale:
            converged = True
            break
        # One pair of arrays for the point, so that the data's curvature keeps its margins over the products.
        hessian = scipy.sparse.linalg.LinearOperator(
            (theta.size, theta.size), matvec=partial(curvature, split(theta)), dtype=np.float64
        )
        # Inexact Newton: a rough step far from the minimum, an ever more exact one near it (superlinear).
        forcing = max(CG_TOLERANCE, min(0.1, np.sqrt(np.linalg.norm(grad) / scale)))
        step, _ = scipy.sparse.linalg.cg(
            hessian, -grad, atol=0.0, maxiter=CG_MAX_ITER, **{_CG_RELATIVE_TOLERANCE: forcing}
        )
        length = _exact_step_length(objective, theta, step, float(grad @ step))
        if length * np.linalg.norm(step) <= np.finfo(np.float64).eps * np.linalg.norm(theta):
            converged = True  # at the floating-point floor: no step changes the model any more
            break
        theta = theta + length * step
        _, grad = objective(theta)
    coef, intercept = split(theta)
    return coef.copy(), intercept.copy(), converged


def _exact_step_length(objective, theta, step, slope_at_zero):
    """The ``t > 0`` where the objective's slope along ``step`` vanishes (it is convex and piecewise quadratic).

    A Newton step is exact (``t = 1``) once the margins it crosses no longer change; otherwise the slope, a
    non-decreasing piecewise-linear function of ``t``, is bracketed and its root found by Brent's method.
    """

    if slope_at_zero >= 0.0:
        return 0.0
    along = (objective, theta, step)
    high = 1.0
    slope_high = _slope_along(high, *along)
    if abs(slope_high) <= SLOPE_TOLERANCE * abs(slope_at_zero):
        return high
    low = 0.0
    while slope_high < 0.0:  # not far enough yet: the root lies beyond
        low, high = high, 2.0 * high
        slope_high = _slope_along(high, *along)
    # The point and the step go to brentq in ``args``, not in a closure: scipy wraps the function in a
    # self-referencing closure, a reference cycle that only the cyclic garbage collector frees, and a closure
    # over them kept two copies of the model alive per Newton step (34 copies at the peak of a 5-class refit).
    return scipy.optimize.brentq(_slope_along, low, high, args=along, xtol=1e-14, rtol=1e-12)


def _slope_along(t, objective, theta, step):
    """The objective's slope at ``theta + t * step`` along ``step``."""
    return float(objective(theta + t * step)[1] @ step)

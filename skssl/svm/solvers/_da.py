"""Deterministic-annealing semi-supervised l2-SVM (SVMlin's ``DA_S3VM``).

The beliefs of the unlabeled rows (``optimize_p``, a one-dimensional root
find) and the model (the w-step, l2-SVM-MFN on the problem's belief terms
of :mod:`skssl.svm.solvers._problem`) are optimized alternately while a temperature
falls (the loop of :mod:`skssl.svm.solvers._annealing`, shared with Potts DA); the
lowest-objective model of the path is returned. The objective, the belief update and the implementation decisions
are in the user guide, "Mathematical formulation of the linear S3VMs": its
section "Deterministic annealing" and the deterministic-annealing part of
"Implementation decisions".
"""

from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from ._annealing import (
    DA_ANNEALING_RATE,
    DA_INIT_TEMP,
    DA_INNER_ITERMAX,
    DA_OUTER_ITERMAX,
    AnnealingCounts,
    AnnealingSchedule,
    AnnealingSteps,
    BestPoint,
    anneal,
)
from ..kernels._kernels import belief_mean, dot
from ._mfn import MFNITERMAX
from ._problem import BeliefWStep, S3VMProblem, binary_solver_parameters
from ..kernels._rowblocks import RowSlicer, fit_threads

__all__ = [
    "DA_ANNEALING_RATE",
    "DA_INIT_TEMP",
    "DA_INNER_ITERMAX",
    "DA_OUTER_ITERMAX",
    "DAResult",
    "belief_gaps",
    "belief_root",
    "deterministic_annealing",
    "entropy_bits",
    "kl_bits",
    "optimize_p",
]

_CLIP = 1e-8


@dataclass
class DAResult(AnnealingCounts):
    """Solution of one binary DA S3VM.

    ``w``, ``b`` and ``outputs`` (``X @ w + b``) of the lowest-objective point,
    its SVMlin ``objective`` and the final beliefs ``p``, then the counts of
    :class:`~skssl.svm.solvers._annealing.AnnealingCounts` (``n_temperatures`` is 0
    without unlabeled rows; the estimator's ``n_iter_`` is its largest value
    over the binary problems, at least 1).
    """

    w: np.ndarray
    b: float
    outputs: np.ndarray
    objective: float
    p: np.ndarray

    @property
    def n_iter(self):
        """The estimator's iteration count: ``n_temperatures``, at least 1 (without unlabeled rows, one solve)."""
        return max(self.n_temperatures, 1)


def belief_gaps(outputs, unlabeled_weight):
    """The belief gaps ``g = lam_u (max(0, 1 - o)^2 - max(0, 1 + o)^2)`` of unlabeled rows with outputs ``o``.

    A row's belief is ``expit((nu - g) / T)``.
    """
    return unlabeled_weight * (np.maximum(0.0, 1.0 - outputs) ** 2 - np.maximum(0.0, 1.0 + outputs) ** 2)


def optimize_p(g, T, r, weight=None, n_threads=1):
    """Beliefs ``p = expit((nu - g) / T)`` with ``nu`` such that the (``weight``-weighted) mean of ``p`` is ``r``.

    ``n_threads`` threads run the compiled evaluation of the mean.
    """

    if not np.isfinite(g).all():
        raise FloatingPointError(
            "DA's belief update got non-finite outputs; the data are too large for float64: scale X first."
        )

    g = np.ascontiguousarray(g, dtype=np.float64)
    weight = _NO_WEIGHT if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
    args = (g, T, r, weight, n_threads)

    nu = belief_root(_belief_excess, args, g.min(), g.max(), T, r)
    return expit((nu - g) / T)


def belief_root(excess, args, g_min, g_max, T, r):
    """The threshold ``nu`` where ``excess(nu, *args)``, increasing in ``nu``, is 0.

    ``excess`` is ``mean(expit((nu - g) / T)) - r``; the bracket comes from
    ``g_min``, ``g_max`` and is widened if rounding leaves an end on the wrong
    side; brentq finds the root to ``1e-11 T``. The Dask fit solves the same
    equation on the same bracket to the same tolerance
    (:func:`~skssl.svm.dask._dask_da.dask_belief_root`).
    """
    shift = T * np.log((1.0 - r) / r)
    lo = g_min - shift
    hi = g_max - shift
    # Rounding can leave an end of the bracket a hair on the wrong side.
    width = max(hi - lo, T, 1.0)
    f_lo, f_hi = excess(lo, *args), excess(hi, *args)
    while f_lo > 0:
        lo -= width
        width *= 2.0
        f_lo = excess(lo, *args)
    while f_hi < 0:
        hi += width
        width *= 2.0
        f_hi = excess(hi, *args)
    if f_lo == 0:
        return lo
    if f_hi == 0:
        return hi
    # p moves on the scale T in nu: an absolute tolerance 1e-11 T keeps
    # |mean(p) - r| below ~1e-11 whatever the spread of g.
    # The function goes to brentq with g in ``args``, not in a closure:
    # scipy wraps it in a self-referencing closure, a reference cycle that
    # only the cyclic garbage collector frees, and that kept ~100 arrays
    # g alive through a DA fit (0.45x the CSR size of X on an RCV1-shaped
    # problem of 200k rows).
    return brentq(excess, lo, hi, args=args, xtol=1e-11 * T, rtol=4 * np.finfo(float).eps, maxiter=4000)


def _belief_excess(nu, g, T, r, weight, n_threads):
    """``mean(p) - r`` for the threshold ``nu`` (weighted mean unless ``weight`` is empty), by the compiled kernel."""
    return belief_mean(nu, g, T, weight, n_threads) - r


# The compiled kernel's "no weights" (an empty array rather than None, so that its signature stays typed).
_NO_WEIGHT = np.empty(0)


def entropy_bits(p, weight=None):
    """Mean binary entropy of ``p`` in bits (0 log 0 = 0), weighted by ``weight`` if given."""
    inside = (p > 0) & (p < 1)
    q = p[inside]
    if q.size == 0:
        return 0.0
    h = -(q * np.log2(q) + (1 - q) * np.log2(1 - q))
    if weight is None:
        return float(h.sum() / p.size)
    return dot(weight[inside], h) / float(weight.sum())


def kl_bits(p, q, weight=None):
    """Mean KL divergence ``KL(p || q)`` in bits, both clipped to ``[1e-8, 1 - 1e-8]``, weighted if given."""
    p = np.clip(p, _CLIP, 1 - _CLIP)
    q = np.clip(q, _CLIP, 1 - _CLIP)
    return float(np.average(p * np.log2(p / q) + (1 - p) * np.log2((1 - p) / (1 - q)), weights=weight))


@binary_solver_parameters
def deterministic_annealing(
    X,
    y,
    labeled,
    *,
    alpha,
    unlabeled_weight,
    positive_fraction,
    alpha_b=None,
    tol=1e-6,
    max_iter=DA_OUTER_ITERMAX,
    max_inner_iter=DA_INNER_ITERMAX,
    max_newton_iter=MFNITERMAX,
    initial_temperature=DA_INIT_TEMP,
    verbose=0,
    n_threads=1,
    callback=None,
    sample_weight=None,
):
    """DA S3VM on one binary problem.

    Parameters
    ----------
    alpha_b : float, default=None
        Regularization of the bias; ``None`` takes ``alpha`` (SVMlin's).
    tol : float, default=1e-6
        Threshold of the mean KL divergence (inner loop) and of the mean
        entropy (outer loop), in bits.
    max_iter : int, default=DA_OUTER_ITERMAX
        Cap on the temperatures visited (outer iterations).
    max_inner_iter : int, default=DA_INNER_ITERMAX
        Cap on the alternations of ``optimize_p`` and the w-step at one
        temperature (inner iterations).
    max_newton_iter : int, default=MFNITERMAX
        Newton steps cap of each w-step.
    initial_temperature : float, default=DA_INIT_TEMP
        The first temperature over ``unlabeled_weight`` (SVMlin's 10).
    verbose : int
        Print the annealing progress when > 0.
    callback : callable, default=None
        Receives the fit's events (see :mod:`skssl.svm._callback`; ``None``
        takes the installed one, if any): those of the annealing loop (see
        :func:`~skssl.svm.solvers._annealing.anneal`), whose ``objective`` is
        SVMlin's objective and ``annealed_objective`` ``None``, and those of
        every w-step's l2-SVM-MFN solve (see :func:`~skssl.svm.solvers._mfn.l2_svm_mfn`);
        without unlabeled rows, only the latter, of its one solve.
    n_threads : int, default=1
        Threads for the products over row blocks (see
        :mod:`skssl.svm.kernels._rowblocks`).
    sample_weight : ndarray of shape (n_rows,), default=None
        Positive row weights: they scale each row's loss, and the means of
        the objective and of the constraint ``mean(p) = r`` become weighted
        means. ``None``: unit weights.

    Returns
    -------
    result : DAResult
    """
    problem = S3VMProblem(
        y, labeled, alpha=alpha, unlabeled_weight=unlabeled_weight, sample_weight=sample_weight, alpha_b=alpha_b
    )
    schedule = AnnealingSchedule(tol, max_iter, max_inner_iter, verbose, callback, initial_temperature)
    with fit_threads(n_threads) as threads:
        unl, n_unl = problem.unl, problem.n_unl
        if n_unl == 0:
            # The supervised l2-SVM (in this thread, as SVMlin's DA solves it).
            res = BeliefWStep(X, problem, max_iter=max_newton_iter, callback=schedule.callback).solve(None, True)
            F = problem.objective(res.w, res.b, res.outputs)
            return DAResult(
                res.w, res.b, res.outputs, F, np.empty(0), n_w_steps=1, n_temperatures=0, mfn_converged=res.converged
            )
        w_unl = problem.unl_weight
        r = positive_fraction
        step = BeliefWStep(
            X, problem, max_iter=max_newton_iter, n_threads=n_threads, slicer=RowSlicer(), callback=schedule.callback
        )
        best = BestPoint()

        def w_step(p, T, first, last):
            res = step.solve(p, first, threads)
            F = problem.objective(res.w, res.b, res.outputs)
            best.offer(F, res.w, res.b, res.outputs)
            return F

        def p_step(T):
            return optimize_p(belief_gaps(step.outputs[unl], unlabeled_weight), T, r, w_unl, n_threads)

        measures = partial(kl_bits, weight=w_unl), partial(entropy_bits, weight=w_unl)
        steps = AnnealingSteps("DA", w_step, p_step, *measures)
        path = anneal(np.full(n_unl, r), steps, schedule, unlabeled_weight=unlabeled_weight, best=best)
        return path.result(DAResult, best, step.converged)

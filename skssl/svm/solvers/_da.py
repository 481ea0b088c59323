"""Deterministic-annealing semi-supervised l2-SVM (SVMlin's ``DA_S3VM``).

The beliefs of the unlabeled rows (``optimize_p``: the threshold of
:func:`belief_root`, a one-dimensional root search in rounds of many
thresholds that the Dask fit shares) and the model (the w-step, l2-SVM-MFN
on the problem's belief terms of :mod:`skssl.svm.solvers._problem`) are
optimized alternately while a temperature falls (the loop of
:mod:`skssl.svm.solvers._annealing`, shared with Potts DA); the
lowest-objective model of the path is returned. The objective, the belief
update and the implementation decisions are in the user guide, "Mathematical formulation of the linear S3VMs": its
section "Deterministic annealing" and the deterministic-annealing part of
"Implementation decisions".
"""

from dataclasses import dataclass
from functools import partial

import numpy as np
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
from ..kernels._kernels import belief_sums, dot
from ._mfn import MFNITERMAX
from ._problem import BeliefWStep, S3VMProblem, binary_solver_parameters
from ..kernels._rowblocks import RowSlicer, fit_threads

__all__ = [
    "DA_ANNEALING_RATE",
    "DA_INIT_TEMP",
    "DA_INNER_ITERMAX",
    "DA_OUTER_ITERMAX",
    "GUESS_OFFSETS",
    "ROUND_THRESHOLDS",
    "BeliefSteps",
    "DAResult",
    "MemoryBeliefSums",
    "belief_gaps",
    "belief_root",
    "belief_threshold",
    "deterministic_annealing",
    "entropy_bits",
    "guess_thresholds",
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

    ``nu`` is :func:`belief_root`'s, each round of thresholds one pass of the
    compiled kernel on ``n_threads`` threads.
    """
    return expit((belief_threshold(g, T, r, weight, n_threads) - g) / T)


def belief_threshold(g, T, r, weight=None, n_threads=1, guess=None):
    """The threshold ``nu`` of :func:`optimize_p`; its first round tries thresholds around ``guess`` if given."""
    if not np.isfinite(g).all():
        raise FloatingPointError(
            "DA's belief update got non-finite outputs; the data are too large for float64: scale X first."
        )
    g = np.ascontiguousarray(g, dtype=np.float64)
    weight = _NO_WEIGHT if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
    return belief_root(MemoryBeliefSums(g, T, r, weight, n_threads), g.min(), g.max(), T, r, guess=guess)


class BeliefSteps:
    """DA's p-steps along the temperatures: each search for ``nu`` starts around the last one found (as on Dask)."""

    def __init__(self, r, weight=None, n_threads=1):
        self.r, self.weight, self.n_threads = r, weight, n_threads
        self.nu = None

    def __call__(self, g, T):
        """The beliefs of :func:`optimize_p` for gaps ``g`` at temperature ``T``."""
        self.nu = belief_threshold(g, T, self.r, self.weight, self.n_threads, guess=self.nu)
        return expit((self.nu - g) / T)


class MemoryBeliefSums:
    """:func:`belief_root`'s ``evaluate`` on in-memory gaps ``g``: a round of thresholds in one compiled pass.

    ``weight`` is empty for unweighted rows (the compiled kernel's "no weights").
    """

    def __init__(self, g, T, r, weight, n_threads):
        self.g, self.T, self.r, self.weight, self.n_threads = g, T, r, weight, n_threads
        self.total = float(weight.sum()) if weight.size else float(g.size)

    def __call__(self, xs):
        xs = np.ascontiguousarray(xs, dtype=np.float64)
        sums = belief_sums(xs, self.g, self.T, self.weight, self.n_threads)
        return sums[:, 0] / self.total - self.r, sums[:, 1] / (self.total * self.T)


#: Offsets, in units of ``T``, of the thresholds tried on each side of a guess of ``nu``.
GUESS_OFFSETS = 1e-6 * 6.0 ** np.arange(8)
#: Thresholds per round of :func:`belief_root` after the first.
ROUND_THRESHOLDS = 9
#: Rounds after which :func:`belief_root` gives up.
MAX_ROUNDS = 200


def guess_thresholds(nu, T):
    """The thresholds a first round tries around a guess ``nu`` at temperature ``T``, increasing."""
    d = T * GUESS_OFFSETS
    return np.concatenate([nu - d[::-1], [nu], nu + d])


def _cubic_root(a, fa, sa, b, fb, sb):
    """The root in ``[a, b]`` of the cubic with values ``fa < 0 < fb`` and slopes ``sa``, ``sb`` at the ends."""
    h = b - a

    def cubic(t):
        return (
            fa * (1 + t * t * (2 * t - 3))
            + h * sa * t * (t - 1) ** 2
            + fb * t * t * (3 - 2 * t)
            + h * sb * t * t * (t - 1)
        )

    lo, hi = 0.0, 1.0
    for _ in range(64):  # bisection: the cubic need not be monotone, but it changes sign on [0, 1]
        t = 0.5 * (lo + hi)
        if cubic(t) < 0:
            lo = t
        else:
            hi = t
    return min(max(a + 0.5 * (lo + hi) * h, a), b)


def _error_bound(h, T):
    """A bound on the distance from the cubic's root to the mean's on a bracket of width ``h`` (see the module)."""
    return h**4 * np.exp(h / T) / (384.0 * T**3) if h < 50.0 * T else np.inf


def _spread(c, a, b, T, m):
    """``m`` thresholds on each side of ``c`` in ``(a, b)``, at distances growing geometrically from ~``T``."""
    sides = []
    for end in (a, b):
        u = np.linspace(0.0, np.log1p(abs(end - c) / T), m + 1)[1:]
        sides.append(c + np.sign(end - c) * T * np.expm1(u))
    return np.concatenate(sides)


def belief_root(evaluate, g_min, g_max, T, r, tried=None, guess=None):
    """The threshold ``nu`` where the weighted mean of ``expit((nu - g) / T)`` is ``r``, from rounds of thresholds.

    The one search of both backends: each round evaluates many thresholds
    (one compiled pass in memory, one round trip on a cluster); the bracket
    comes from ``g_min``, ``g_max`` and is widened if rounding leaves an end on
    the wrong side; on the tightest bracket the mean is interpolated by a cubic
    (Hermite, from the values and slopes at its ends) whose error bound gives
    the tolerance ``1e-11 T + 4 eps |nu|``: ``p`` moves on the scale ``T`` in
    ``nu``, so ``|mean(p) - r|`` stays below ~1e-11 whatever the spread of ``g``.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(xs) -> (f, slope)``: the mean of the beliefs minus ``r`` and its derivative in ``nu`` at
        each threshold of the array ``xs`` (one round trip).
    g_min, g_max, T, r : float
        The range of ``g``, the temperature and the target mean.
    tried : tuple of ndarray, default=None
        ``(xs, f, slope)`` already evaluated.
    guess : float, default=None
        An estimate of ``nu``: without ``tried``, the first round tries :func:`guess_thresholds` around it
        (``None``: :data:`ROUND_THRESHOLDS` thresholds over the bracket).

    Returns
    -------
    nu : float
    """
    shift = T * np.log((1.0 - r) / r)
    lo, hi = g_min - shift, g_max - shift
    width = max(hi - lo, T, 1.0)
    seen = {}

    def add(xs, f, slope):
        seen.update((float(x), (float(fx), float(sx))) for x, fx, sx in zip(xs, f, slope))

    def try_(xs):
        xs = np.unique(np.asarray([x for x in xs if np.isfinite(x) and float(x) not in seen], dtype=np.float64))
        if xs.size:
            add(xs, *evaluate(xs))
        return xs.size

    if tried is not None:
        add(*tried)
    else:
        try_(np.linspace(lo, hi, ROUND_THRESHOLDS) if guess is None else guess_thresholds(guess, T))
    for _ in range(MAX_ROUNDS):
        xs = sorted(seen)
        f = np.array([seen[x][0] for x in xs])
        if (f == 0).any():
            return xs[int(np.argmax(f == 0))]
        above = np.flatnonzero(f > 0)
        b = xs[above[0]] if above.size else None
        below = [x for x, fx in zip(xs, f) if fx < 0 and (b is None or x < b)]
        a = below[-1] if below else None
        if a is None or b is None:
            # Every threshold tried is on one side: towards that end of the bracket, widened (as in memory)
            # when rounding left the end itself on the wrong side.
            if b is None:
                if hi <= a:
                    hi, width = a + width, 2.0 * width
                x, end = a, hi
            else:
                if lo >= b:
                    lo, width = b - width, 2.0 * width
                x, end = b, lo
            d = end - x
            next_xs = x + d * np.geomspace(min(1e-6 * T / abs(d), 1.0 / ROUND_THRESHOLDS), 1.0, ROUND_THRESHOLDS)
        else:
            (fa, sa), (fb, sb) = seen[a], seen[b]
            h = b - a
            nu = _cubic_root(a, fa, sa, b, fb, sb)
            bound = _error_bound(h, T)
            tol = 1e-11 * T + 4.0 * np.finfo(float).eps * abs(nu)
            if bound <= 0.5 * tol or h <= tol:
                return nu
            m = (ROUND_THRESHOLDS - 1) // 2
            if bound < 0.5 * h:  # around the estimate, within the bound, closer and closer
                d = bound * 4.0 ** -np.arange(m)
                next_xs = np.concatenate([nu - d, [nu], nu + d])
            else:  # evenly over the bracket, and spread out from the estimate (a wide bracket, a steep mean)
                next_xs = np.concatenate([np.linspace(a, b, ROUND_THRESHOLDS + 2)[1:-1], [nu], _spread(nu, a, b, T, m)])
            next_xs = [x for x in next_xs if a < x < b]
        if not try_(next_xs):
            return nu if a is not None and b is not None else (a if b is None else b)
    raise RuntimeError(f"DA's belief threshold was not found in {MAX_ROUNDS} rounds (T={T:.3g}).")


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

        beliefs = BeliefSteps(r, w_unl, n_threads)

        def p_step(T):
            return beliefs(belief_gaps(step.outputs[unl], unlabeled_weight), T)

        measures = partial(kl_bits, weight=w_unl), partial(entropy_bits, weight=w_unl)
        steps = AnnealingSteps("DA", w_step, p_step, *measures)
        path = anneal(np.full(n_unl, r), steps, schedule, unlabeled_weight=unlabeled_weight, best=best)
        return path.result(DAResult, best, step.converged)

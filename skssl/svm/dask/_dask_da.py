"""Deterministic annealing (DA S3VM) on a Dask cluster: :func:`dask_deterministic_annealing` and its block steps.

The loop is the in-memory annealing driver (:func:`~skssl.svm.solvers._annealing.anneal`);
its w-step is :func:`~skssl.svm.dask._dask_mfn.dask_mfn` on the blocks' states of
:mod:`skssl.svm.dask._dask_problem`, and the beliefs stay on the blocks. The
belief threshold ``nu`` (where the weighted mean belief is the class
fraction) is found by :func:`dask_belief_root` in few rounds: each round
evaluates many thresholds on every block, and the client interpolates the
mean on the tightest bracket by a cubic whose error bound gives brentq's
tolerance. The first thresholds travel with the w-step's last round, and a
round's thresholds share one exponential per group (:func:`_sums`).

Design decisions: user guide, Implementation decisions: linear S3VMs, "Dask fits".
"""

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from ..solvers._annealing import DA_ANNEALING_RATE, DA_INIT_TEMP, AnnealingSchedule, AnnealingSteps, BestPoint, anneal
from ..solvers._da import DAResult, belief_gaps
from ._dask_mfn import dask_mfn, system_step
from ._dask_problem import _half_penalty, _s3vm_part, _set_outputs, _sum, new_states, s3vm_objective, solve_norm
from ..kernels._kernels import dot
from ..solvers._mfn import EPSILON, MFNITERMAX, CGTolerance

__all__ = [
    "GUESS_OFFSETS",
    "ROUND_THRESHOLDS",
    "dask_belief_root",
    "dask_deterministic_annealing",
    "guess_thresholds",
]

#: Offsets, in units of ``T``, of the thresholds tried on each side of a guess of ``nu``.
GUESS_OFFSETS = 1e-6 * 6.0 ** np.arange(8)
#: Thresholds per round of :func:`dask_belief_root` after the first.
ROUND_THRESHOLDS = 9
#: Rounds after which :func:`dask_belief_root` gives up.
MAX_ROUNDS = 200
#: Thresholds of :func:`_sums` within this many temperatures of a shared centre share its exponential.
SHARED_EXP_SPAN = 30.0


# ----------------------------------------------------------------------------------------------------------
# Worker side: a block's state and the steps on it. A step never modifies the state it is given.


def _da_state(s):
    """DA's loss terms on the block: labeled rows, then every unlabeled row as +1 and as -1 (beliefs set later)."""
    terms = s.problem.belief_terms()
    return replace(s, targets=terms.targets, cost=terms.cost.copy(), rows=terms.rows, reply=None)


def _set_beliefs_cost(s, p):
    """The unlabeled terms' costs for beliefs ``p`` (``None``: the block's own beliefs)."""
    p = s.p if p is None else np.full(s.problem.n_unl, p)
    return replace(s, cost=s.problem.belief_terms().set_beliefs(p), p=p, reply=None)


def _gaps(s, o, lam_u):
    """The belief gaps ``g`` of the block's unlabeled rows at the outputs ``o``, and (min, max, all finite)."""
    g = belief_gaps(o[s.problem.unl], lam_u)
    return g, ((float(g.min()), float(g.max()), bool(np.isfinite(g).all())) if g.size else None)


def _belief_gaps(s, lam_u):
    g, stats = _gaps(s, s.o, lam_u)
    return replace(s, g=g, reply=stats)


def _unl_weights(s):
    w = s.problem.unl_weight
    return np.ones(s.problem.n_unl) if w is None else w


def _sums(g, weight, xs, T):
    """Weighted sums of ``p = expit((x - g) / T)`` and of ``p (1 - p)`` for each threshold ``x``: shape (K, 2).

    Thresholds within ``2 SHARED_EXP_SPAN T`` of each other share one
    exponential: ``p = 1 / (1 + exp((g - c) / T) exp((c - x) / T))`` with ``c``
    the group's centre; the second factor stays within ``exp(+-SHARED_EXP_SPAN)``,
    so an infinite first factor still gives the belief's limit 0.
    """
    out = np.zeros((len(xs), 2))
    if not g.size:
        return out
    xs = np.asarray(xs, dtype=np.float64)
    order = np.argsort(xs, kind="stable")
    ascending = xs[order]
    p, q = np.empty_like(g), np.empty_like(g)
    start = 0
    with np.errstate(over="ignore"):
        while start < xs.size:
            c = ascending[start] + SHARED_EXP_SPAN * T
            end = int(np.searchsorted(ascending, c + SHARED_EXP_SPAN * T, side="right"))
            shared = np.exp((g - c) / T)
            for k in order[start:end]:
                np.multiply(shared, np.exp((c - xs[k]) / T), out=p)
                p += 1.0
                np.reciprocal(p, out=p)
                np.subtract(1.0, p, out=q)
                q *= p
                out[k] = dot(weight, p), dot(weight, q)
            start = end
    return out


def _belief_sums(s, xs, T):
    return _sums(s.g, _unl_weights(s), xs, T)


def _w_step_tail(s, o, lam_u, xs, T):
    """At the outputs ``o`` that end a w-step: the block's S3VM part, its gaps (kept in the state) with their
    range, and the sums of :func:`_sums` at the thresholds ``xs`` (``None``: none asked, or gaps not finite)."""
    g, stats = _gaps(s, o, lam_u)
    sums = None if xs is None or (stats is not None and not stats[2]) else _sums(g, _unl_weights(s), xs, T)
    return {"g": g}, (_s3vm_part(s, o), stats, sums)


def _new_beliefs(s, nu, T):
    """Beliefs at ``nu``; reply: the weighted sums of their KL divergence from the old ones and of their entropy."""
    p = expit((nu - s.g) / T)
    weight = _unl_weights(s)
    clip = 1e-8
    a, q = np.clip(p, clip, 1 - clip), np.clip(s.p, clip, 1 - clip)
    kl = dot(weight, a * np.log2(a / q) + (1 - a) * np.log2((1 - a) / (1 - q))) if p.size else 0.0
    inside = (p > 0) & (p < 1)
    r = p[inside]
    h = -(r * np.log2(r) + (1 - r) * np.log2(1 - r))
    return replace(_set_beliefs_cost(replace(s, p=p), None), reply=(kl, dot(weight[inside], h)))


def _beliefs_and_system(s, nu, T):
    """:func:`_new_beliefs`, then the w-step's first Newton system; reply: the system's, then (kl, entropy)."""
    s = _new_beliefs(s, nu, T)
    kl_entropy = s.reply
    s = system_step(s)
    return replace(s, reply=s.reply + kl_entropy)


# ----------------------------------------------------------------------------------------------------------
# Client side: the threshold.


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


def dask_belief_root(evaluate, g_min, g_max, T, r, tried=None, guess=None):
    """The threshold ``nu`` where the weighted mean of ``expit((nu - g) / T)`` is ``r``, from rounds of thresholds.

    The in-memory :func:`~skssl.svm.solvers._da.belief_root`'s equation, bracket and tolerance, by rounds of many
    thresholds instead of brentq's single evaluations (user guide, Implementation decisions).

    Parameters
    ----------
    evaluate : callable
        ``evaluate(xs) -> (f, slope)``: the mean of the beliefs minus ``r`` and its derivative in ``nu`` at
        each threshold of the array ``xs`` (one round trip).
    g_min, g_max, T, r : float
        As for :func:`~skssl.svm.solvers._da.belief_root`: the range of ``g``, the temperature and the target mean.
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


# ----------------------------------------------------------------------------------------------------------
# Client side: the annealing.


@dataclass
class DaskBeliefs:
    """The beliefs of a Dask DA fit, held by the blocks; the client keeps their mean ``kl`` and ``entropy`` (bits)."""

    kl: float
    entropy: float


def dask_deterministic_annealing(
    rows,
    spec,
    *,
    alpha,
    positive_fraction,
    alpha_b=None,
    tol=1e-6,
    max_iter=30,
    max_inner_iter=100,
    max_newton_iter=MFNITERMAX,
    initial_temperature=DA_INIT_TEMP,
    verbose=0,
    callback=None,
):
    """DA S3VM on one binary problem of a cluster's blocks (:func:`~skssl.svm.solvers._da.deterministic_annealing`).

    Parameters
    ----------
    rows : DaskRows
    spec : ProblemSpec
    alpha, positive_fraction, alpha_b, tol, max_iter, max_inner_iter, max_newton_iter, initial_temperature, verbose,
    callback
        As for :func:`~skssl.svm.solvers._da.deterministic_annealing`. The callback's ``beliefs`` field is a
        :class:`DaskBeliefs` (the beliefs stay on the workers).

    Returns
    -------
    result : DAResult
        ``outputs`` and ``p`` are the blocks' states (futures) at the returned point.
    """
    schedule = AnnealingSchedule(tol, max_iter, max_inner_iter, verbose, callback, initial_temperature)
    totals, lam_u = spec.totals, spec.unlabeled_weight
    mfn = {"alpha": alpha, "alpha_b": alpha_b, "max_iter": max_newton_iter, "callback": schedule.callback}
    if totals.n_unl == 0:
        states = new_states(rows, spec, supervised=True)
        res = dask_mfn(rows, states, first=True, x_norm=solve_norm(rows, supervised=True), **mfn)
        states = rows.submit(_set_outputs, new_states(rows, spec), res.w, res.b)
        F = s3vm_objective(rows, states, alpha, res.w, res.b, alpha_b)
        return DAResult(res.w, res.b, states, F, None, n_w_steps=1, n_temperatures=0, mfn_converged=res.converged)
    r = positive_fraction
    weight_total = float(totals.n_unl)  # the unlabeled rows' weights have mean 1 (see S3VMProblem)
    tolerance = CGTolerance()
    x_norm = solve_norm(rows)  # every w-step solves on all kept rows
    # The current point; "tail": the blocks' tail replies at it, at the thresholds "xs" and temperature "T";
    # "system": the replies of the Newton system the next w-step starts from; "nu": the last threshold.
    point = {"w": None, "b": 0.0, "states": rows.submit(_da_state, new_states(rows, spec)), "nu": None}
    best = BestPoint()
    converged = [True]

    def w_step(beliefs, T, first, last):
        states = point["states"]
        if first:
            states = rows.submit(_set_beliefs_cost, states, r)
        # The next p-step's temperature (the loop lowers it after a temperature's last w-step), if one comes.
        next_T = T if first or not last else T / DA_ANNEALING_RATE
        xs = None if point["nu"] is None else guess_thresholds(point["nu"], next_T)
        res = dask_mfn(
            rows, states, w=point["w"], b=point["b"], first=first, tolerance=tolerance, stop="absolute",
            abs_tol=EPSILON, tail=(_w_step_tail, lam_u, xs, next_T), system=point.pop("system", None), x_norm=x_norm,
            **mfn,
        )  # fmt: skip
        converged[0] &= res.converged
        point.update(w=res.w, b=res.b, states=res.outputs, tail=res.tail, xs=xs, T=next_T)
        if res.tail is None:
            F = s3vm_objective(rows, res.outputs, alpha, res.w, res.b, alpha_b)
        else:
            F = _half_penalty(alpha, res.w, res.b, alpha_b) + sum(t[0] for t in res.tail)
        best.offer(F, res.w, res.b, res.outputs)
        return F

    def evaluate(states, T):
        def f_and_slope(xs):
            sums = sum(rows.query(_belief_sums, states, xs, T))
            return sums[:, 0] / weight_total - r, sums[:, 1] / (weight_total * T)

        return f_and_slope

    def p_step(T):
        states, tail, tried = point["states"], point.pop("tail", None), None
        if tail is None:  # the w-step ended where no tail ran: a round for the gaps
            states, stats = rows.round(_belief_gaps, states, lam_u)
        else:
            stats = [t[1] for t in tail]
        stats = [x for x in stats if x is not None]
        if not all(x[2] for x in stats):
            raise FloatingPointError(
                "DA's belief update got non-finite outputs; the data are too large for float64: scale X first."
            )
        g_min, g_max = min(x[0] for x in stats), max(x[1] for x in stats)
        if tail is not None and point["xs"] is not None and point["T"] == T:
            sums = sum(t[2] for t in tail)
            tried = (point["xs"], sums[:, 0] / weight_total - r, sums[:, 1] / (weight_total * T))
        nu = dask_belief_root(evaluate(states, T), g_min, g_max, T, r, tried=tried, guess=point["nu"])
        states, replies = rows.round(_beliefs_and_system, states, nu, T)
        point.update(states=states, system=(states, replies), nu=nu)
        return DaskBeliefs(_sum(replies, 6) / weight_total, _sum(replies, 7) / weight_total)

    h0 = float(-(r * np.log2(r) + (1 - r) * np.log2(1 - r))) if 0 < r < 1 else 0.0
    steps = AnnealingSteps("DA", w_step, p_step, lambda new, old: new.kl, lambda beliefs: beliefs.entropy)
    path = anneal(DaskBeliefs(1.0, h0), steps, schedule, unlabeled_weight=lam_u, best=best)
    return path.result(DAResult, best, converged[0])

"""Deterministic annealing (DA S3VM) on a Dask cluster: :func:`dask_deterministic_annealing` and its block steps.

The loop is the in-memory annealing driver (:func:`~skssl.svm.solvers._annealing.anneal`);
its w-step is :func:`~skssl.svm.dask._dask_mfn.dask_mfn` on the blocks' states of
:mod:`skssl.svm.dask._dask_problem`, and the beliefs stay on the blocks. The
belief threshold ``nu`` (where the weighted mean belief is the class
fraction) is found by the in-memory search,
:func:`~skssl.svm.solvers._da.belief_root`, whose rounds of thresholds are
here rounds over the blocks: each block sums its beliefs at every threshold
of a round in one pass of the compiled kernel (:func:`_sums`), and the first
thresholds travel with the w-step's last round.

Design decisions: user guide, Implementation decisions: linear S3VMs, "Dask fits".
"""

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from ..solvers._annealing import DA_ANNEALING_RATE, DA_INIT_TEMP, AnnealingSchedule, AnnealingSteps, BestPoint, anneal
from ..solvers._da import DAResult, belief_gaps, belief_root, guess_thresholds
from ._dask_mfn import dask_mfn, system_step
from ._dask_problem import _half_penalty, _s3vm_part, _set_outputs, _sum, new_states, s3vm_objective, solve_norm
from ..kernels._kernels import belief_sums, dot
from ..solvers._mfn import EPSILON, MFNITERMAX, CGTolerance

__all__ = ["dask_deterministic_annealing"]


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
    """Weighted sums of ``p = expit((x - g) / T)`` and of ``p (1 - p)`` for each threshold ``x``: shape (K, 2)."""
    xs = np.ascontiguousarray(xs, dtype=np.float64)
    return belief_sums(xs, np.ascontiguousarray(g, dtype=np.float64), T, np.ascontiguousarray(weight), 1)


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
        nu = belief_root(evaluate(states, T), g_min, g_max, T, r, tried=tried, guess=point["nu"])
        states, replies = rows.round(_beliefs_and_system, states, nu, T)
        point.update(states=states, system=(states, replies), nu=nu)
        return DaskBeliefs(_sum(replies, 6) / weight_total, _sum(replies, 7) / weight_total)

    h0 = float(-(r * np.log2(r) + (1 - r) * np.log2(1 - r))) if 0 < r < 1 else 0.0
    steps = AnnealingSteps("DA", w_step, p_step, lambda new, old: new.kl, lambda beliefs: beliefs.entropy)
    path = anneal(DaskBeliefs(1.0, h0), steps, schedule, unlabeled_weight=lam_u, best=best)
    return path.result(DAResult, best, converged[0])

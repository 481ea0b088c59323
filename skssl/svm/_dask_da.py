"""Deterministic annealing (DA S3VM) on a Dask cluster: :func:`dask_deterministic_annealing` and its block steps.

The loop is the in-memory annealing driver (:func:`~skssl.svm._annealing.anneal`);
its w-step is :func:`~skssl.svm._dask_mfn.dask_mfn` on the blocks' states of
:mod:`skssl.svm._dask_problem`, and the beliefs stay on the blocks.

Decisions
---------
* **DA's belief update** is per row except the threshold ``nu``; the
  client runs the in-memory root finder (:func:`~skssl.svm._da.belief_root`)
  on ``mean(p) - r`` summed over the blocks, one round per evaluation.
"""

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from ._annealing import AnnealingSchedule, AnnealingSteps, BestPoint, anneal
from ._da import DAResult, belief_root
from ._dask_mfn import dask_mfn
from ._dask_problem import _set_outputs, _sum, new_states, s3vm_objective
from ._kernels import dot
from ._mfn import EPSILON, MFNITERMAX, CGTolerance

__all__ = [
    "dask_deterministic_annealing",
]


def _da_state(s):
    """DA's loss terms on the block: labeled rows, then every unlabeled row as +1 and as -1 (beliefs set later)."""
    terms = s.problem.belief_terms()
    return replace(s, targets=terms.targets, cost=terms.cost.copy(), rows=terms.rows, reply=None)


def _set_beliefs_cost(s, p):
    """The unlabeled terms' costs for beliefs ``p`` (``None``: the block's own beliefs)."""
    p = s.p if p is None else np.full(s.problem.n_unl, p)
    return replace(s, cost=s.problem.belief_terms().set_beliefs(p), p=p, reply=None)


def _belief_gaps(s, lam_u):
    o = s.o[s.problem.unl]
    g = lam_u * (np.maximum(0.0, 1.0 - o) ** 2 - np.maximum(0.0, 1.0 + o) ** 2)
    reply = (float(g.min()), float(g.max()), bool(np.isfinite(g).all())) if g.size else None
    return replace(s, g=g, reply=reply)


def _unl_weights(s):
    w = s.problem.unl_weight
    return np.ones(s.problem.n_unl) if w is None else w


def _belief_sum(s, nu, T):
    return dot(_unl_weights(s), expit((nu - s.g) / T)) if s.g.size else 0.0


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


@dataclass
class DaskBeliefs:
    """The beliefs of a Dask DA fit, held by the blocks: the client keeps their divergence and entropy.

    Attributes
    ----------
    kl : float
        Mean KL divergence (bits) from the previous beliefs.
    entropy : float
        Mean entropy (bits).
    """

    kl: float
    entropy: float


def dask_deterministic_annealing(
    rows,
    spec,
    *,
    alpha,
    positive_fraction,
    tol=1e-6,
    max_iter=30,
    max_inner_iter=100,
    max_newton_iter=MFNITERMAX,
    verbose=0,
    callback=None,
):
    """DA S3VM on one binary problem of a cluster's blocks (:func:`~skssl.svm._da.deterministic_annealing`).

    Parameters
    ----------
    rows : DaskRows
    spec : ProblemSpec
    alpha, positive_fraction, tol, max_iter, max_inner_iter, max_newton_iter, verbose, callback
        As for :func:`~skssl.svm._da.deterministic_annealing`. The callback's ``beliefs`` field is a
        :class:`DaskBeliefs` (the beliefs stay on the workers).

    Returns
    -------
    result : DAResult
        ``outputs`` and ``p`` are the blocks' states (futures) at the returned point.
    """
    schedule = AnnealingSchedule(tol, max_iter, max_inner_iter, verbose, callback)
    totals, lam_u = spec.totals, spec.unlabeled_weight
    mfn = {"alpha": alpha, "max_iter": max_newton_iter, "callback": schedule.callback}
    if totals.n_unl == 0:
        res = dask_mfn(rows, new_states(rows, spec, supervised=True), first=True, **mfn)
        states = rows.submit(_set_outputs, new_states(rows, spec), res.w, res.b)
        F = s3vm_objective(rows, states, alpha, res.w, res.b)
        return DAResult(res.w, res.b, states, F, None, n_w_steps=1, n_temperatures=0, mfn_converged=res.converged)
    r = positive_fraction
    weight_total = float(totals.n_unl)  # the unlabeled rows' weights have mean 1 (see S3VMProblem)
    tolerance = CGTolerance()
    point = {"w": None, "b": 0.0, "states": rows.submit(_da_state, new_states(rows, spec))}
    best = BestPoint()
    converged = [True]

    def w_step(beliefs, T, first, last):
        states = point["states"]
        if first:
            states = rows.submit(_set_beliefs_cost, states, r)
        res = dask_mfn(
            rows, states, w=point["w"], b=point["b"], first=first, tolerance=tolerance, stop="absolute",
            abs_tol=EPSILON, **mfn,
        )  # fmt: skip
        converged[0] &= res.converged
        point.update(w=res.w, b=res.b, states=res.outputs)
        F = s3vm_objective(rows, res.outputs, alpha, res.w, res.b)
        best.offer(F, res.w, res.b, res.outputs)
        return F

    def p_step(T):
        states, replies = rows.round(_belief_gaps, point["states"], lam_u)
        replies = [x for x in replies if x is not None]
        if not all(x[2] for x in replies):
            raise FloatingPointError(
                "DA's belief update got non-finite outputs; the data are too large for float64: scale X first."
            )
        g_min, g_max = min(x[0] for x in replies), max(x[1] for x in replies)

        def excess(nu):
            return sum(rows.query(_belief_sum, states, nu, T)) / weight_total - r

        nu = belief_root(excess, (), g_min, g_max, T, r)
        states, replies = rows.round(_new_beliefs, states, nu, T)
        point["states"] = states
        return DaskBeliefs(_sum(replies, 0) / weight_total, _sum(replies, 1) / weight_total)

    h0 = float(-(r * np.log2(r) + (1 - r) * np.log2(1 - r))) if 0 < r < 1 else 0.0
    steps = AnnealingSteps("DA", w_step, p_step, lambda new, old: new.kl, lambda beliefs: beliefs.entropy)
    path = anneal(DaskBeliefs(1.0, h0), steps, schedule, unlabeled_weight=lam_u, best=best)
    return path.result(DAResult, best, converged[0])

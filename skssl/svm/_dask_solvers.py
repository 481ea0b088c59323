"""l2-SVM-MFN, TSVM and DA on a Dask cluster: the solvers' loops over the row blocks of :mod:`skssl.svm._dask_rows`.

The client runs the loops and holds what is feature-length (weights,
CGLS's direction and residual) or scalar; every block's rows and per-row
state (outputs, costs, switched labels, beliefs, the Newton system's active
rows) stay on the worker that holds the block, in an immutable
:class:`BlockState` that each step replaces. The arithmetic is the
in-memory solvers' (:mod:`skssl.svm._mfn`, :mod:`skssl.svm._tsvm`,
:mod:`skssl.svm._da`), with sums over blocks in place of sums over rows, so
a fit gives the in-memory model up to the order of floating-point sums.

Decisions
---------
* **One round trip per CGLS iteration.** A step takes the new direction
  ``p`` and returns ``X_J^T (C q)`` with ``q = X_J p``, and the scalars
  ``q' C q``, ``sum(C q)``, ``z' C q`` and ``|C q|^2``; the client updates
  ``w`` and ``X^T z`` and gets ``sum(z)`` and ``|z|^2`` after the row update
  ``z -= t C q`` from those scalars, so the row update itself runs at the
  start of the next step (fused with its product). A Newton step adds two
  rounds: its system (active set, ``X_J^T z``, fused with the previous line
  search's step) and the end of CGLS (the outputs at the Newton point, the
  optimality test and the line search's breakpoints). Bytes per CGLS
  iteration: one direction out and one feature-length sum back per block.
* **Exact line search on global sums.** Each block computes its
  breakpoints (where a loss term enters or leaves the active set) and their
  slope changes. When there are at most :data:`GATHER_BREAKPOINTS` in all,
  the client gathers them and walks them sorted, as the in-memory search
  does; otherwise it bisects on the step: each probe returns the blocks'
  sums of slope changes before the probe and their breakpoint counts in
  the bracket, until the bracket holds few enough to gather. The step is
  the in-memory one up to rounding.
* **TSVM's switches by distributed top-k.** Each block returns its ``S``
  best candidates of each kind (``S`` the switch cap), in row order; the
  client runs :func:`~skssl.svm._tsvm.switch_labels` on their union, which
  picks exactly the pairs it picks on all rows (ties by row), and sends the
  switches back. The initial labels (the ``r u`` largest outputs positive)
  need a k-th largest value: a selection over the order-preserving integer
  keys of the outputs, 256 thresholds per round (at most 8 rounds), then
  ties by row order.
* **DA's belief update** is per row except the threshold ``nu``; the
  client runs the in-memory root finder (:func:`~skssl.svm._da.belief_root`)
  on ``mean(p) - r`` summed over the blocks, one round per evaluation.
* The loops are the in-memory ones where they are shared: TSVM's through
  its rows interface (:class:`DaskTSVMRows`), DA's through the annealing
  driver (:func:`~skssl.svm._annealing.anneal`). l2-SVM-MFN is written here
  again on rounds, because its in-memory loop works on arrays in place.
"""

import time
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import expit

from ._annealing import AnnealingSchedule, AnnealingSteps, BestPoint, anneal
from ._callback import current_callback, notify
from ._da import DAResult, belief_root
from ._kernels import dot
from ._mfn import (
    BIG_EPSILON,
    CGITERMAX,
    EPSILON,
    MFNITERMAX,
    RELATIVE_STOP_EPS,
    SMALL_CGITERMAX,
    CGTolerance,
    MFNResult,
    _active_system,
    check_newton_point,
    mfn_objective,
)
from ._mfn import _finish as _report
from ._problem import ProblemTotals, S3VMProblem
from ._tsvm import _smallest, switch_labels

__all__ = [
    "GATHER_BREAKPOINTS",
    "BlockState",
    "DaskTSVMRows",
    "ProblemSpec",
    "dask_deterministic_annealing",
    "dask_mfn",
    "new_states",
]

#: The line search gathers the breakpoints to the client when there are at most this many (in all blocks).
GATHER_BREAKPOINTS = 1 << 16

#: Thresholds per round of the k-th largest selection.
SELECTION_THRESHOLDS = 255

_NO_W = np.empty(0)


# ----------------------------------------------------------------------------------------------------------
# Worker side: a block's state and the steps on it. A step never modifies the state it is given.


@dataclass(frozen=True)
class ProblemSpec:
    """What defines one binary problem on every block (sent to the workers once).

    Attributes
    ----------
    classes : ndarray
        The labels of the classes, sorted.
    positive : int
        Index in ``classes`` of the positive class.
    class_weight : ndarray or None
        Weight of each class, multiplying the labeled rows' weights.
    weighted : bool
        Whether the rows carry weights (``False``: every kept row weighs 1).
    unlabeled_weight : float
        ``lam_u`` (0: the supervised problem on the labeled rows).
    totals : ProblemTotals
        The whole problem's counts and weight sums.
    """

    classes: np.ndarray
    positive: int
    class_weight: np.ndarray | None
    weighted: bool
    unlabeled_weight: float
    totals: ProblemTotals


@dataclass(frozen=True)
class BlockState:
    """A block's rows of one binary problem and their per-row state (on its worker).

    ``X`` holds the block's rows of positive weight (``keep``), or only the
    labeled ones for a supervised solve; the loss terms are ``targets`` and
    ``cost`` of the rows ``rows`` (``None``: one term per row); ``o`` the
    outputs. The other fields are the current Newton system, CGLS's row
    vectors, the Newton point's outputs, the line search's breakpoints, the
    temporary labels (TSVM) and the beliefs (DA).
    """

    X: object
    problem: S3VMProblem
    targets: np.ndarray
    cost: np.ndarray
    rows: np.ndarray | None
    o: np.ndarray
    keep: np.ndarray | None = None
    active: np.ndarray | None = None
    J: np.ndarray | None = None
    XJ: object = None
    cJ: np.ndarray | None = None
    tJ: np.ndarray | None = None
    oJ: np.ndarray | None = None
    z: np.ndarray | None = None
    q: np.ndarray | None = None
    o_bar: np.ndarray | None = None
    breaks: tuple | None = None
    g: np.ndarray | None = None
    p: np.ndarray | None = None
    reply: object = field(default=None, compare=False)


def _problem_rows(block, spec):
    """The rows of the problem on ``block``: (rows kept, +1/-1 targets, labeled mask, row weights or None)."""
    y, sw = block.y, block.sw
    labeled = y != -1
    weights = sw
    if spec.class_weight is not None:
        weights = sw.copy()
        codes = np.searchsorted(spec.classes, y[labeled])
        weights[labeled] = sw[labeled] * spec.class_weight[codes]
    keep = np.flatnonzero(weights > 0)
    target = np.where(y == spec.classes[spec.positive], 1.0, -1.0)
    if keep.size == y.size:
        keep = None
    take = (lambda a: a) if keep is None else (lambda a: a[keep])
    return keep, take(target), take(labeled), (take(weights) if spec.weighted else None)


def _state(block, spec, supervised):
    """The state of ``spec``'s problem on ``block`` at ``w = 0, b = 0``: all kept rows, or the labeled ones."""
    keep, target, labeled, weights = _problem_rows(block, spec)
    X = block.X if keep is None else block.X[keep]
    lam_u = 0.0 if supervised else spec.unlabeled_weight
    problem = S3VMProblem(target, labeled, alpha=0.0, unlabeled_weight=lam_u, sample_weight=weights, totals=spec.totals)
    if supervised:
        lab = problem.lab
        if lab.size != X.shape[0]:
            X = X[lab]
        return BlockState(X, problem, problem.y_lab, problem.lab_cost, None, np.zeros(lab.size), keep=keep)
    return BlockState(X, problem, target.copy(), np.zeros(X.shape[0]), None, np.zeros(X.shape[0]), keep=keep)


def _objective_part(s, o):
    """The block's part of l2-SVM-MFN's loss, ``1/2 sum_t c_t max(0, 1 - y_t o_t)^2``."""
    return mfn_objective(_NO_W, 0.0, o, s.targets, s.cost, 0.0, s.rows)


def _zero_outputs(s, b=0.0):
    return replace(s, o=np.full(s.X.shape[0], b), o_bar=None, reply=None)


def _set_outputs(s, w, b):
    return replace(s, o=s.X @ w + b, o_bar=None, reply=None)


def _system(s, delta):
    """Take the line search's step ``delta`` (if any), then build the Newton system at the outputs."""
    o = s.o if delta is None else s.o + delta * (s.o_bar - s.o)
    n_rows = s.X.shape[0]
    active, J, cJ, tJ = _active_system(o, s.targets, s.cost, s.rows, n_rows)
    XJ = s.X if J.size == n_rows else s.X[J]
    oJ = o[J]
    z = cJ * (tJ - oJ)
    reply = (XJ.T @ z, float(z.sum()), dot(z, z), J.size, _objective_part(s, o))
    return replace(s, o=o, active=active, J=J, XJ=XJ, cJ=cJ, tJ=tJ, oJ=oJ, z=z, q=None, o_bar=None, reply=reply)


def _restart(s):
    """The same Newton system from the Newton point's outputs (a tighter CGLS tolerance)."""
    z = s.cJ * (s.tJ - s.oJ)
    return replace(s, z=z, q=None, reply=(s.XJ.T @ z, float(z.sum()), dot(z, z), s.J.size, 0.0))


def _row_update(s, t):
    """CGLS's update of the rows for the previous step ``t``: ``o_J += t q``, ``z -= t C q``."""
    if t is None:
        return s.oJ, s.z
    return s.oJ + t * s.q, s.z - t * (s.cJ * s.q)


def _cgls_step(s, t, p, pb, p_norm):
    oJ, z = _row_update(s, t)
    q = s.XJ @ p
    q += pb
    q /= p_norm
    cq = s.cJ * q
    reply = (s.XJ.T @ cq, dot(q, cq), float(cq.sum()), dot(z, cq), dot(cq, cq))
    return replace(s, oJ=oJ, z=z, q=q, reply=reply)


def _finish(s, t, w_bar, b_bar, eps):
    """End of CGLS: the Newton point's outputs, its optimality on the block and the line search's breakpoints."""
    oJ, z = _row_update(s, t)
    n_rows, J = s.X.shape[0], s.J
    if J.size == n_rows:
        o_bar = oJ
    else:
        o_bar = np.empty(n_rows)
        others = np.ones(n_rows, dtype=bool)
        others[J] = False
        o_bar[others] = s.X[others] @ w_bar + b_bar
        o_bar[J] = oJ
    y, cost = s.targets, s.cost
    ot, ot_bar = (s.o, o_bar) if s.rows is None else (s.o[s.rows], o_bar[s.rows])
    yo_bar = y * ot_bar
    active = s.active
    optimal = bool(np.all(yo_bar[active] <= 1.0 + eps)) and bool(np.all(yo_bar[~active] >= 1.0 - eps))
    # The line search's terms: the slope of F along the step is L + delta (R - L) on each piece.
    yo = y * ot
    act = yo < 1.0
    do = ot_bar - ot
    cdo = cost * do
    L = dot(ot[act] - y[act], cdo[act])
    R = dot(ot_bar[act] - y[act], cdo[act])
    slope = y * do
    entering = ~act & (slope < 0)
    idx = np.flatnonzero((act & (slope > 0)) | entering)
    with np.errstate(over="ignore", divide="ignore"):
        deltas = (1.0 - yo[idx]) / slope[idx]
    sc = np.where(entering[idx], 1.0, -1.0) * cdo[idx]
    breaks = (deltas, sc * (ot[idx] - y[idx]), sc * (ot_bar[idx] - y[idx]))
    few = idx.size <= GATHER_BREAKPOINTS
    top = float(deltas.max()) if idx.size else 0.0
    reply = (optimal, _objective_part(s, o_bar), L, R, idx.size, top, breaks if few else None)
    return replace(s, oJ=oJ, z=z, q=None, o_bar=o_bar, breaks=breaks, reply=reply)


def _accept(s):
    """Move to the Newton point (it was optimal)."""
    return replace(s, o=s.o_bar, o_bar=None, breaks=None, reply=None)


def _probe(s, x, lo, hi, send):
    """Sums of the slope changes of the breakpoints before ``x``, counts in ``[lo, x]`` and ``[x, hi]``, and
    (``send``) the breakpoints in ``[lo, hi]``."""
    d, dL, dR = s.breaks
    before = d < x
    low = (d >= lo) & (d <= x)
    high = (d >= x) & (d <= hi)
    inside = (d >= lo) & (d <= hi)
    pts = (d[inside], dL[inside], dR[inside]) if send else None
    return (float(dL[before].sum()), float(dR[before].sum()), int(low.sum()), int(high.sum()), pts)


# ----------------------------------------------------------------------------------------------------------
# Client side.


def new_states(rows, spec, supervised=False):
    """The states of ``spec``'s problem on every block, at ``w = 0, b = 0`` (futures, nothing waited for)."""
    return [rows.client.submit(_state, block, spec, supervised, pure=False) for block in rows.blocks]


def _sum(replies, k):
    total = replies[0][k]
    for r in replies[1:]:
        total = total + r[k]
    return total


def _half_penalty(alpha, w, b):
    return float(0.5 * alpha * (dot(w, w) + b * b))


def _walk(L, R, deltas, dL, dR):
    """The root of the slope ``L + delta (R - L)`` along the sorted breakpoints (as the in-memory search)."""
    order = np.argsort(deltas, kind="stable")
    deltas = deltas[order]
    Lk = L + np.concatenate([[0.0], np.cumsum(dL[order])])
    Rk = R + np.concatenate([[0.0], np.cumsum(dR[order])])
    with np.errstate(invalid="ignore", over="ignore"):
        stop = Lk[:-1] + deltas * (Rk[:-1] - Lk[:-1]) >= 0
    k = int(np.argmax(stop)) if stop.any() else deltas.size
    L, R = Lk[k], Rk[k]
    return float(-L / (R - L)) if R > L else 0.0


def _cat(parts, k):
    return np.concatenate([p[k] for p in parts]) if parts else np.empty(0)


def _line_search(rows, states, replies, w, w_bar, b, b_bar, alpha):
    dw, db = w_bar - w, b_bar - b
    L = alpha * (dot(w, dw) + b * db) + _sum(replies, 2)
    R = alpha * (dot(w_bar, dw) + b_bar * db) + _sum(replies, 3)
    if all(r[6] is not None for r in replies):
        pts = [r[6] for r in replies]
        return _walk(L, R, _cat(pts, 0), _cat(pts, 1), _cat(pts, 2))
    lo, hi = 0.0, max(r[5] for r in replies)
    count = _sum(replies, 4)
    while True:
        send = count <= GATHER_BREAKPOINTS
        x = lo if send else 0.5 * (lo + hi)
        if not send and not lo < x < hi:  # the bracket is down to rounding: gather what is in it
            x, send = lo, True
        probes = rows.query(_probe, states, x, lo, hi, send)
        Lx, Rx = L + _sum(probes, 0), R + _sum(probes, 1)
        if send:
            pts = [p[4] for p in probes]
            return _walk(Lx, Rx, _cat(pts, 0), _cat(pts, 1), _cat(pts, 2))
        if Lx + x * (Rx - Lx) >= 0:
            hi, count = x, _sum(probes, 2)
        else:
            lo, count = x, _sum(probes, 3)


def _cgls(rows, states, system, w, b, alpha, eps, max_iter):
    """CGLS on the blocks' Newton systems from ``(w, b)``; one round per iteration.

    Returns ``(w, b, converged, n_iter, t, states)`` with ``t`` the last step, whose row update the blocks
    have not made yet (``None``: none pending).
    """
    xtz, z_sum, zz, n_active = system[:4]
    if n_active == 0:
        return np.zeros_like(w), 0.0, True, 0, None, states
    r = xtz - alpha * w
    rb = z_sum - alpha * b
    omega1 = dot(r, r) + rb * rb
    eps2 = eps * eps
    if omega1 <= eps2 * zz:
        return w, b, True, 0, None, states
    p, pb, omega_p, t = r, rb, omega1, None
    for it in range(1, max_iter + 1):
        p_norm = float(np.sqrt(omega_p))
        states, replies = rows.round(_cgls_step, states, t, p, pb, p_norm)
        u, qcq, cq_sum, zcq, cqcq = (_sum(replies, k) for k in range(5))
        t = (omega1 / p_norm) / (alpha + qcq)
        w = w + (t / p_norm) * p
        b = b + (t / p_norm) * pb
        xtz = xtz - t * u
        r = xtz - alpha * w
        # z -= t C q on the rows, whose sum and squared norm follow from the step's scalars.
        z_sum = z_sum - t * cq_sum
        zz = zz - 2.0 * t * zcq + t * t * cqcq
        rb = z_sum - alpha * b
        omega_new = dot(r, r) + rb * rb
        if omega_new <= eps2 * zz:
            return w, float(b), True, it, t, states
        scale = omega_new / omega1
        omega1 = omega_new
        pb = rb + scale * pb
        p = scale * p + r
        omega_p = dot(p, p) + pb * pb
    return w, float(b), False, max_iter, t, states


def dask_mfn(rows, states, *, alpha, w=None, b=0.0, first=True, tolerance=None, stop="relative", **limits):
    """l2-SVM-MFN on the blocks' loss terms (:func:`~skssl.svm._mfn.l2_svm_mfn` on a cluster).

    Parameters
    ----------
    rows : DaskRows
        The cluster's blocks.
    states : list of Future
        Every block's :class:`BlockState`, its outputs at ``(w, b)`` (unless ``w`` is None).
    alpha, w, b, first, tolerance, stop
        As for :func:`~skssl.svm._mfn.l2_svm_mfn`.
    **limits
        ``rel_tol``, ``abs_tol``, ``max_iter`` and ``callback``, as for :func:`~skssl.svm._mfn.l2_svm_mfn`
        (whose defaults they take); the callback gets the same events.

    Returns
    -------
    result : MFNResult
        Its ``outputs`` are the blocks' new states (futures), whose outputs are at the solution.
    """
    rel_tol = limits.get("rel_tol", RELATIVE_STOP_EPS)
    abs_tol = limits.get("abs_tol", EPSILON)
    max_iter = limits.get("max_iter", MFNITERMAX)
    callback = current_callback(limits.get("callback"))
    if w is None:
        states = rows.submit(_zero_outputs, states, float(b))  # the outputs at w = 0
    w = np.zeros(rows.n_features) if w is None else np.array(w, dtype=np.float64)
    b = float(b)
    tolerance = CGTolerance() if tolerance is None else tolerance
    if first:  # a solve from scratch: a loose tolerance and a short first CGLS (as in memory)
        tolerance.eps = BIG_EPSILON
    cg_cap, eps = (SMALL_CGITERMAX if first else CGITERMAX), tolerance.eps
    states, replies = rows.round(_system, states, None)
    F = _half_penalty(alpha, w, b) + _sum(replies, 4)
    system = [_sum(replies, k) for k in range(4)]
    n_cg = n_empty = 0
    seed = None
    for it in range(1, max_iter + 1):
        if seed is None:
            n_empty += system[3] == 0
            w0, b0 = w, b
        else:
            w0, b0 = seed
            seed = None
        start = time.process_time()
        w_bar, b_bar, cg_ok, k, t, states = _cgls(rows, states, system, w0, b0, alpha, eps, cg_cap)
        if callback is not None:
            notify(
                callback, "cgls", newton_step=it, n_rows=int(system[3]), n_iter=k, converged=cg_ok, eps=eps,
                cpu_time=time.process_time() - start,
            )  # fmt: skip
        n_cg += k
        check_newton_point(w_bar, b_bar)
        cg_cap = CGITERMAX
        states, replies = rows.round(_finish, states, t, w_bar, b_bar, eps)
        if cg_ok and all(r[0] for r in replies):
            if eps > EPSILON:
                eps = tolerance.eps = EPSILON
                states, replies = rows.round(_restart, states)
                system = [_sum(replies, k) for k in range(4)]
                seed = (w_bar, b_bar)
                continue
            F = _half_penalty(alpha, w_bar, b_bar) + _sum(replies, 1)
            return _report(callback, MFNResult(w_bar, b_bar, rows.submit(_accept, states), F, it, n_cg,
                                                      n_empty, True))  # fmt: skip
        delta = _line_search(rows, states, replies, w, w_bar, b, b_bar, alpha)
        n_breaks = _sum(replies, 4)
        w = w + delta * (w_bar - w)
        b = b + delta * (b_bar - b)
        states, replies = rows.round(_system, states, delta)
        F_old, F = F, _half_penalty(alpha, w, b) + _sum(replies, 4)
        system = [_sum(replies, k) for k in range(4)]
        if callback is not None:
            notify(callback, "line_search", newton_step=it, n_breakpoints=int(n_breaks), step=delta, objective=F)
        gap = abs(F - F_old)
        if (stop == "relative" and gap < rel_tol * abs(F_old)) or (stop == "absolute" and gap < abs_tol):
            return _report(callback, MFNResult(w, b, states, F, it, n_cg, n_empty, True))
    return _report(callback, MFNResult(w, b, states, F, max_iter, n_cg, n_empty, False))


# ----------------------------------------------------------------------------------------------------------
# The S3VM objective and TSVM.


def _s3vm_part(s):
    """The block's part of SVMlin's ``transductive_cost`` (without the penalty) at its outputs."""
    return s.problem.objective(_NO_W, 0.0, s.o)


def s3vm_objective(rows, states, alpha, w, b):
    """SVMlin's ``transductive_cost`` of the problem at ``(w, b)``, the blocks' outputs being at that point."""
    return _half_penalty(alpha, w, b) + sum(rows.query(_s3vm_part, states))


def _with_costs(s, lam):
    """TSVM's costs: the labeled rows' and ``lam`` spread over the unlabeled ones."""
    cost = np.empty(s.X.shape[0])
    cost[s.problem.lab] = s.problem.lab_cost
    if s.problem.n_unl:
        cost[s.problem.unl] = s.problem.unlabeled_cost(lam)
    return replace(s, cost=cost, reply=None)


def _order_keys(x):
    """Integers in the order of the float64 values ``x`` (-0.0 and 0.0 equal)."""
    i = x.view(np.int64)
    return np.where(i >= 0, i, np.int64(-(2**63)) - i)


def _unlabeled_keys(s):
    return _order_keys(s.o[s.problem.unl])


def _key_range(s):
    k = _unlabeled_keys(s)
    return (int(k.min()), int(k.max())) if k.size else None


def _key_counts(s, thresholds):
    k = np.sort(_unlabeled_keys(s))
    return k.size - np.searchsorted(k, np.asarray(thresholds, dtype=np.int64), side="left")


def _top_labels(s, key, n_ties):
    """Temporary labels: +1 on unlabeled rows with a key above ``key`` and on the first ``n_ties`` equal to it."""
    unl = s.problem.unl
    k = _unlabeled_keys(s)
    positive = k > key
    positive[np.flatnonzero(k == key)[:n_ties]] = True
    targets = s.targets.copy()
    targets[unl] = np.where(positive, 1.0, -1.0)
    return replace(s, targets=targets, reply=None)


def _switch_candidates(s, max_switches):
    """The block's best switch candidates: (outputs, rows) of each kind, at most ``max_switches``, in row order."""
    unl = s.problem.unl
    yu, ou = s.targets[unl], s.o[unl]
    out = []
    for kind, keys in ((yu > 0) & (ou < 1.0), ou), ((yu < 0) & (ou > -1.0), -ou):
        idx = np.flatnonzero(kind)
        if idx.size > max_switches:
            idx = np.sort(_smallest(idx, keys[idx], max_switches))
        out.append((ou[idx], idx))
    return out


def _switch(s, to_negative, to_positive):
    targets = s.targets.copy()
    unl = s.problem.unl
    targets[unl[to_negative]] = -1.0
    targets[unl[to_positive]] = 1.0
    return replace(s, targets=targets, reply=None)


class DaskTSVMRows:
    """TSVM's rows interface (see :func:`~skssl.svm._tsvm.tsvm_loop`) on a cluster's blocks.

    Parameters
    ----------
    rows : DaskRows
    spec : ProblemSpec
    mfn_options : dict
        Keyword arguments of every :func:`dask_mfn` solve (``alpha``, ``tolerance``, ``rel_tol``,
        ``max_iter``, ``callback``).
    """

    def __init__(self, rows, spec, mfn_options):
        self.rows = rows
        self.spec = spec
        self.options = mfn_options
        self.alpha = mfn_options["alpha"]
        self.n_unl = spec.totals.n_unl
        self.states = new_states(rows, spec)

    def solve_labeled(self):
        return dask_mfn(self.rows, new_states(self.rows, self.spec, supervised=True), first=True, **self.options)

    def supervised_result(self, res):
        states = self.rows.submit(_set_outputs, self.states, res.w, res.b)
        return states, s3vm_objective(self.rows, states, self.alpha, res.w, res.b)

    def start_labels(self, res, n_pos):
        rows = self.rows
        states = rows.submit(_set_outputs, self.states, res.w, res.b)
        if n_pos == 0:
            self.states = rows.submit(_top_labels, states, np.iinfo(np.int64).max, 0)
            return
        ranges = [r for r in rows.query(_key_range, states) if r is not None]
        # The n_pos-th largest key v: count(key >= lo) >= n_pos > count(key >= hi).
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges) + 1
        per_block_lo = per_block_hi = None
        while hi - lo > 1:
            step = max((hi - lo) // (SELECTION_THRESHOLDS + 1), 1)
            thresholds = list(range(lo + step, hi, step))[:SELECTION_THRESHOLDS]
            counts = np.array(rows.query(_key_counts, states, thresholds))  # (blocks, thresholds)
            enough = counts.sum(axis=0) >= n_pos
            j = int(np.count_nonzero(enough))  # counts fall with the threshold
            if j:
                lo, per_block_lo = thresholds[j - 1], counts[:, j - 1]
            if j < len(thresholds):
                hi, per_block_hi = thresholds[j], counts[:, j]
        if per_block_lo is None:
            per_block_lo = np.array(rows.query(_key_counts, states, [lo]))[:, 0]
        if per_block_hi is None:
            per_block_hi = np.array(rows.query(_key_counts, states, [hi]))[:, 0]
        # Keys above lo are positive, then the ties at lo in row order up to n_pos.
        ties = per_block_lo - per_block_hi
        room = n_pos - int(per_block_hi.sum())
        quota = np.minimum(ties, np.maximum(room - np.concatenate([[0], np.cumsum(ties)[:-1]]), 0))
        self.states = rows.submit(_top_labels, states, lo, each=[int(q) for q in quota])

    def set_unlabeled_cost(self, lam):
        self.states = self.rows.submit(_with_costs, self.states, lam)

    def solve(self, res, first):
        seed = {} if first else {"w": res.w, "b": res.b}
        res = dask_mfn(self.rows, self.states, first=first, **seed, **self.options)
        self.states = res.outputs
        return res

    def switch(self, res, max_switches):
        cands = self.rows.query(_switch_candidates, self.states, max_switches)
        pos = [c[0] for c in cands]
        neg = [c[1] for c in cands]
        n_p = np.array([p[0].size for p in pos])
        outputs = np.concatenate([p[0] for p in pos] + [q[0] for q in neg])
        labels = np.concatenate([np.ones(n_p.sum()), -np.ones(outputs.size - n_p.sum())])
        n = switch_labels(labels, outputs, np.arange(outputs.size), max_switches)
        if n == 0:
            return 0
        # Split the switched candidates back into blocks.
        went_negative = np.flatnonzero(labels[: n_p.sum()] < 0)
        went_positive = np.flatnonzero(labels[n_p.sum() :] > 0)
        starts_p = np.concatenate([[0], np.cumsum(n_p)])
        n_n = np.array([q[0].size for q in neg])
        starts_n = np.concatenate([[0], np.cumsum(n_n)])
        each = []
        for i in range(len(cands)):
            to_neg = pos[i][1][went_negative[(went_negative >= starts_p[i]) & (went_negative < starts_p[i + 1])]
                               - starts_p[i]]  # fmt: skip
            to_pos = neg[i][1][went_positive[(went_positive >= starts_n[i]) & (went_positive < starts_n[i + 1])]
                               - starts_n[i]]  # fmt: skip
            each.append((to_neg, to_pos))
        self.states = self.rows.submit(_switch_each, self.states, each=each)
        return n

    def full_outputs(self, res):
        return res

    def objective(self, res):
        return s3vm_objective(self.rows, self.states, self.alpha, res.w, res.b)

    def labels(self):
        return self.states


def _switch_each(s, switches):
    return _switch(s, *switches)


# ----------------------------------------------------------------------------------------------------------
# Deterministic annealing.


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

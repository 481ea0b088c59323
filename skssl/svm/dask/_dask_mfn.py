"""l2-SVM-MFN on a Dask cluster: the Dask backend of the Newton loop, and the block steps behind it.

:class:`DaskNewtonRows` implements the row-backend protocol
(:class:`~skssl.svm.solvers._rows.NewtonRows`) on the blocks' states of
:mod:`skssl.svm.dask._dask_problem`, and :func:`dask_mfn` runs the one Newton
loop (:func:`~skssl.svm.solvers._mfn.newton_solve`) on it. The client holds
the weights and CGLS's direction and residual; each round sends them to the
blocks and sums what the blocks return. One round trip per CGLS iteration;
the line search runs on global sums (breakpoints gathered when at most
:data:`GATHER_BREAKPOINTS`, else bisection on counts); the round that may end
a solve also runs the caller's ``tail`` (TSVM's switch candidates, DA's
belief sums, the objective), and a caller may build the first Newton
system in a round it makes anyway (``system``).

Design decisions: user guide, Implementation decisions: linear S3VMs, "Dask fits".
"""

from dataclasses import dataclass, fields, replace

import numpy as np
import scipy.sparse as sp

from .._callback import current_callback
from ._dask_problem import _NO_W, _half_penalty, _sum, _zero_outputs
from ..kernels._kernels import dot
from ..solvers._mfn import (
    EPSILON,
    SLICE_FRACTION,
    MFNResult,
    _active_system,
    _outputs_after_cgls,
    _scatter,
    mfn_objective,
    newton_solve,
)
from ..solvers._rows import NewtonRows

__all__ = [
    "GATHER_BREAKPOINTS",
    "DaskMFNResult",
    "DaskNewtonRows",
    "dask_mfn",
    "system_step",
]

#: The line search gathers the breakpoints to the client when there are at most this many (in all blocks).
GATHER_BREAKPOINTS = 1 << 16


# ----------------------------------------------------------------------------------------------------------
# Worker side: a block's state and the steps on it. A step never modifies the state it is given.


def _objective_part(s, o):
    """The block's part of l2-SVM-MFN's loss, ``1/2 sum_t c_t max(0, 1 - y_t o_t)^2``."""
    return mfn_objective(_NO_W, 0.0, o, s.targets, s.cost, 0.0, s.rows)


def _with_tail(s, o, tail, reply):
    """``s`` with the reply ``reply + (extra,)``: ``extra`` is the reply of ``tail`` at the outputs ``o`` (or None).

    ``tail`` is ``(func, *args)``; ``func(s, o, *args)`` returns ``(fields, extra)``, the fields going into
    the state (none that a solver step reads).
    """
    if tail is None:
        return replace(s, reply=reply + (None,))
    fields, extra = tail[0](s, o, *tail[1:])
    return replace(s, **fields, reply=reply + (extra,))


def _active_share(X, J):
    """The share of the block's stored values (of its rows, when dense) in the rows ``J``."""
    if not sp.issparse(X):
        return J.size / max(X.shape[0], 1)
    row_nnz = np.diff(X.indptr)
    return float(row_nnz[J].sum()) / max(X.nnz, 1)


def _system(s, delta, tail=None):
    """Take the line search's step ``delta`` (if any), then build the Newton system at the outputs.

    After a step (the solve may end there), the reply ends with ``tail``'s at the new outputs.
    """
    o = s.o if delta is None else s.o + delta * (s.o_bar - s.o)
    n_rows = s.X.shape[0]
    active, J, cJ, tJ = _active_system(o, s.targets, s.cost, s.rows, n_rows)
    if J.size < n_rows and _active_share(s.X, J) > SLICE_FRACTION:
        # As in memory: nearly every row is active, so CGLS runs on the whole block with zero costs on the
        # inactive rows instead of on a near-copy of it.
        cJ, tJ, J = _scatter(J, cJ, n_rows), _scatter(J, tJ, n_rows), np.arange(n_rows)
    XJ = s.X if J.size == n_rows else s.X[J]
    oJ = o[J]
    z = cJ * (tJ - oJ)
    reply = (XJ.T @ z, float(z.sum()), dot(z, z), J.size, _objective_part(s, o))
    s = replace(s, o=o, active=active, J=J, XJ=XJ, cJ=cJ, tJ=tJ, oJ=oJ, z=z, q=None, o_bar=None)
    return _with_tail(s, o, None if delta is None else tail, reply)


def system_step(s):
    """The first Newton system of a solve at the block's outputs, as :func:`dask_mfn` builds it.

    For a caller that folds it into a round of its own and passes the replies as ``system``.
    """
    return _system(s, None)


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


def _finish(s, t, w_bar, b_bar, eps, tail=None):
    """End of CGLS: the Newton point's outputs, its optimality on the block and the line search's breakpoints.

    If the point is optimal on the block at the final tolerance (the solve may end there), the reply ends
    with ``tail``'s at the Newton point's outputs.
    """
    oJ, z = _row_update(s, t)
    # The other rows' outputs by the compiled kernels, reading the block's rows in place (the block's
    # structure was checked on this worker); a fancy-indexed X[others] would copy most of the block.
    o_bar = _outputs_after_cgls(s.X, s.J, oJ, w_bar, b_bar, 1)
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
    s = replace(s, oJ=oJ, z=z, q=None, o_bar=o_bar, breaks=breaks)
    return _with_tail(s, o_bar, tail if optimal and eps <= EPSILON else None, reply)


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


def _line_search(rows, states, replies, w, w_bar, b, b_bar, alpha, alpha_b):
    dw, db = w_bar - w, b_bar - b
    L = alpha * dot(w, dw) + alpha_b * b * db + _sum(replies, 2)
    R = alpha * dot(w_bar, dw) + alpha_b * b_bar * db + _sum(replies, 3)
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


def _cgls(rows, states, system, w, b, alpha, alpha_b, eps, max_iter):
    """CGLS on the blocks' Newton systems from ``(w, b)``; one round per iteration.

    Returns ``(w, b, converged, n_iter, t, states)`` with ``t`` the last step, whose row update the blocks
    have not made yet (``None``: none pending).
    """
    xtz, z_sum, zz, n_active = system[:4]
    if n_active == 0:
        return np.zeros_like(w), 0.0, True, 0, None, states
    r = xtz - alpha * w
    rb = z_sum - alpha_b * b
    omega1 = dot(r, r) + rb * rb
    eps2 = eps * eps
    if omega1 <= eps2 * zz:
        return w, b, True, 0, None, states
    p, pb, omega_p, t = r, rb, omega1, None
    for it in range(1, max_iter + 1):
        p_norm = float(np.sqrt(omega_p))
        states, replies = rows.round(_cgls_step, states, t, p, pb, p_norm)
        u, qcq, cq_sum, zcq, cqcq = (_sum(replies, k) for k in range(5))
        # p' D p / |p|^2 for the unit direction, D = diag(alpha, ..., alpha, alpha_b) (as in memory).
        t = (omega1 / p_norm) / (alpha + (alpha_b - alpha) * (pb / p_norm) * (pb / p_norm) + qcq)
        w = w + (t / p_norm) * p
        b = b + (t / p_norm) * pb
        xtz = xtz - t * u
        r = xtz - alpha * w
        # z -= t C q on the rows, whose sum and squared norm follow from the step's scalars.
        z_sum = z_sum - t * cq_sum
        zz = zz - 2.0 * t * zcq + t * t * cqcq
        rb = z_sum - alpha_b * b
        omega_new = dot(r, r) + rb * rb
        if omega_new <= eps2 * zz:
            return w, float(b), True, it, t, states
        scale = omega_new / omega1
        omega1 = omega_new
        pb = rb + scale * pb
        p = scale * p + r
        omega_p = dot(p, p) + pb * pb
    return w, float(b), False, max_iter, t, states


@dataclass
class DaskMFNResult(MFNResult):
    """An :class:`~skssl.svm.solvers._mfn.MFNResult` on the blocks: ``outputs`` are the blocks' states (futures).

    ``tail`` holds the replies of :func:`dask_mfn`'s ``tail`` at the solution,
    one per block (``None``: none asked for, or none ran).
    """

    tail: list | None = None


def _tail_of(replies, k):
    tail = [r[k] for r in replies]
    return tail if all(t is not None for t in tail) else None


class DaskNewtonRows(NewtonRows):
    """The Dask backend of the Newton loop: the loss terms on the blocks' states, every pass a round over the blocks.

    The client keeps the sums of the blocks' replies: the Newton system's
    ``X^T z``, ``sum z``, ``|z|^2`` and row count, and the loss at the current
    outputs. Building the next Newton system rides on the round of the step
    that moves the outputs (so that :meth:`newton_system` costs no round), and
    the rounds that may end the solve also run the caller's ``tail``, whose
    replies of the latest round are :attr:`tail`.

    Parameters
    ----------
    rows : DaskRows
        The cluster's blocks.
    states : list of Future
        Every block's state, its outputs at ``(w, b)`` (unless ``w`` is None:
        they are set to ``b`` here).
    w, b, tail, system, x_norm
        As for :func:`dask_mfn`.
    """

    def __init__(self, rows, states, *, w, b, tail, system, x_norm):
        self._rows = rows
        self.n_features = rows.n_features
        self.x_norm = x_norm
        self._tail = tail
        if w is None:
            states = rows.submit(_zero_outputs, states, float(b))  # the outputs at w = 0
        self.states, replies = rows.round(_system, states, None) if system is None else system
        self._system = [_sum(replies, k) for k in range(4)]
        self._loss = _sum(replies, 4)
        self._t = self._replies = self.tail = None

    @property
    def outputs(self):
        return self.states

    def objective(self, w, b, alpha, alpha_b):
        return _half_penalty(alpha, w, b, alpha_b) + self._loss

    def newton_system(self):
        return int(self._system[3])

    def cgls(self, w, b, alpha, alpha_b, eps, max_iter, seeded):
        w_bar, b_bar, ok, k, self._t, self.states = _cgls(
            self._rows, self.states, self._system, w, b, alpha, alpha_b, eps, max_iter
        )
        return w_bar, b_bar, ok, k

    def newton_point(self, w_bar, b_bar, eps):
        self.states, self._replies = self._rows.round(_finish, self.states, self._t, w_bar, b_bar, eps, self._tail)
        self.tail = _tail_of(self._replies, 7)
        return all(r[0] for r in self._replies)

    def restart(self):
        self.states, replies = self._rows.round(_restart, self.states)
        self._system = [_sum(replies, k) for k in range(4)]
        self.tail = None

    def line_search(self, w, w_bar, b, b_bar, alpha, alpha_b, count):
        delta = _line_search(self._rows, self.states, self._replies, w, w_bar, b, b_bar, alpha, alpha_b)
        return delta, int(_sum(self._replies, 4))

    def step(self, delta):
        self.states, replies = self._rows.round(_system, self.states, delta, self._tail)
        self._system = [_sum(replies, k) for k in range(4)]
        self._loss = _sum(replies, 4)
        self.tail = _tail_of(replies, 5)

    def accept(self):
        self._loss = _sum(self._replies, 1)
        self.states = self._rows.submit(_accept, self.states)


def dask_mfn(
    rows, states, *, alpha, alpha_b=None, w=None, b=0.0, first=True, tolerance=None, stop="relative", tail=None,
    system=None, x_norm, **limits,
):  # fmt: skip
    """l2-SVM-MFN on the blocks' loss terms: :func:`~skssl.svm.solvers._mfn.newton_solve` on :class:`DaskNewtonRows`.

    Parameters
    ----------
    rows : DaskRows
        The cluster's blocks.
    states : list of Future
        Every block's :class:`BlockState`, its outputs at ``(w, b)`` (unless ``w`` is None).
    alpha, alpha_b, w, b, first, tolerance, stop
        As for :func:`~skssl.svm.solvers._mfn.l2_svm_mfn`.
    tail : tuple, default=None
        ``(func, *args)``: ``func(state, o, *args)`` returns ``(fields, reply)`` for a block whose outputs
        would end the solve at ``o``; it runs in the rounds that may end the solve, and the
        replies of the one that did are the result's ``tail``.
    system : tuple, default=None
        ``(states, replies)`` of a round that ran :func:`system_step` on ``states`` (given with ``w``): the
        solve starts from that Newton system instead of a round of its own.
    x_norm : float
        The Frobenius norm of the blocks' rows (:func:`~skssl.svm.dask._dask_problem.solve_norm`): CGLS's
        tolerance stays above :data:`~skssl.svm.solvers._mfn.CG_ROUNDING_FLOOR` times it, as in memory. Required, so
        that no caller drops the floor by leaving it out (0 drops it on purpose).
    **limits
        ``rel_tol``, ``abs_tol``, ``max_iter`` and ``callback``, as for :func:`~skssl.svm.solvers._mfn.l2_svm_mfn`
        (whose defaults they take); the callback gets the same events.

    Returns
    -------
    result : DaskMFNResult
        Its ``outputs`` are the blocks' new states (futures), whose outputs are at the solution.
    """
    limits["callback"] = current_callback(limits.get("callback"))
    backend = DaskNewtonRows(rows, states, w=w, b=b, tail=tail, system=system, x_norm=x_norm)
    res = newton_solve(
        backend, alpha=alpha, alpha_b=alpha_b, w=w, b=b, first=first, tolerance=tolerance, stop=stop, **limits
    )
    return DaskMFNResult(**{f.name: getattr(res, f.name) for f in fields(res)}, tail=backend.tail)
